"""HTTP routes, one module per resource. Thin: validate, call a service, shape the answer."""
