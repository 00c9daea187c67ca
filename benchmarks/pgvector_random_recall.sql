-- HNSW recall@100 of pgvector on 100k random unit 384-d vectors (pgvector's worst case), by
-- ef_search, and the time of one CREATE INDEX over them (docs/benchmarks.md, issue 29):
--   psql "$(scripts/pgvector url | sed 's/+psycopg//')" -f benchmarks/pgvector_random_recall.sql
\timing on
SET maintenance_work_mem = '1GB';
DROP SCHEMA IF EXISTS recall CASCADE; CREATE SCHEMA recall; SET search_path = recall, public;
CREATE TABLE v (id int PRIMARY KEY, e vector(384));
INSERT INTO v SELECT g, l2_normalize(x.a::vector) FROM generate_series(1, 100000) g,
  LATERAL (SELECT array_agg(random() - 0.5) AS a FROM generate_series(1, 384) s WHERE g > 0) x;
CREATE TABLE q (id int PRIMARY KEY, e vector(384));
INSERT INTO q SELECT g, l2_normalize(x.a::vector) FROM generate_series(1, 20) g,
  LATERAL (SELECT array_agg(random() - 0.5) AS a FROM generate_series(1, 384) s WHERE g > 0) x;
CREATE TABLE exact AS SELECT q.id AS qid, n.id FROM q, LATERAL (SELECT id FROM v ORDER BY (v.e <#> q.e) + 0 LIMIT 100) n;
CREATE INDEX ON v USING hnsw (e vector_ip_ops) WITH (m = 16, ef_construction = 64);
ANALYZE v;
CREATE FUNCTION recall_at(ef int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE hits int := 0; r record;
BEGIN
  PERFORM set_config('hnsw.ef_search', ef::text, true);
  FOR r IN SELECT id, e FROM q LOOP
    hits := hits + (SELECT count(*) FROM (SELECT id FROM v ORDER BY v.e <#> r.e LIMIT 100) h JOIN exact x ON x.qid = r.id AND x.id = h.id);
  END LOOP;
  RETURN hits / 2000.0;
END $$;
SELECT 200 AS ef, recall_at(200) UNION ALL SELECT 400, recall_at(400) UNION ALL SELECT 1000, recall_at(1000);
DROP SCHEMA recall CASCADE;
