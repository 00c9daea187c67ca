// Line icons drawn with SVG DOM calls (24x24, stroke = currentColor). Decorative: the buttons
// that hold them carry an aria-label.

const NS = "http://www.w3.org/2000/svg";
const PATHS = {
  plus: ["M12 5v14", "M5 12h14"],
  menu: ["M4 6h16", "M4 12h16", "M4 18h16"],
  close: ["M6 6l12 12", "M18 6L6 18"],
  pencil: ["M4 20h4L19 9l-4-4L4 16v4z", "M14 6l4 4"],
  refresh: ["M20 11a8 8 0 1 0-2.3 5.7", "M20 4v7h-7"],
  trash: ["M4 7h16", "M9 7V4h6v3", "M6 7l1 13h10l1-13", "M10 11v6", "M14 11v6"],
  send: ["M5 12h14", "M13 6l6 6-6 6"],
  stop: ["M7 7h10v10H7z"],
  book: ["M4 5a2 2 0 0 1 2-2h13v16H6a2 2 0 0 0-2 2V5z", "M4 19a2 2 0 0 1 2-2h13"],
  upload: ["M12 16V4", "M7 9l5-5 5 5", "M4 20h16"],
  file: ["M6 3h8l4 4v14H6z", "M14 3v4h4"],
  alert: ["M12 4l9 16H3z", "M12 10v4", "M12 17v.01"],
  ask: ["M4 5h16v11H9l-5 4z", "M9 10h6"],
  user: ["M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8z", "M4 20a8 8 0 0 1 16 0"],
};

export function icon(name, size = 18) {
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", String(size));
  svg.setAttribute("height", String(size));
  svg.setAttribute("fill", "none");
  svg.setAttribute("stroke", "currentColor");
  svg.setAttribute("stroke-width", "2");
  svg.setAttribute("stroke-linecap", "round");
  svg.setAttribute("stroke-linejoin", "round");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.classList.add("icon");
  for (const d of PATHS[name] || []) {
    const path = document.createElementNS(NS, "path");
    path.setAttribute("d", d);
    svg.append(path);
  }
  return svg;
}
