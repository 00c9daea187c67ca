#!/usr/bin/env bash
# Retrieval-quality runs behind docs/benchmarks.md ("Retrieval quality"): SciFact train and the
# MedQuAD dev subset (flat corpus + Markdown sections), every named configuration, and the gate
# calibration. Knowledge bases are ingested once (slow: ~15 min for SciFact, ~25 min for the
# MedQuAD Markdown subset on 2 busy cores) and reused. Nothing is written into the repository.
#
#   benchmarks/eval_retrieval.sh [scifact|medquad|calibrate|all]
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${RAGCHAT_BENCH_DATA:-../shared/data}
SF=${SF_DIR:-/tmp/sf}
MQ=${MQ_DIR:-/tmp/mq}
SUB=${MQ_SUBSET:-/tmp/medquad-subset}
RC=.venv/bin/ragchat
what=${1:-all}

has_kb() { [ -f "$1/kb/$2/manifest.json" ]; }

scifact() {
  has_kb "$SF" scifact || $RC ingest "$DATA/scifact/corpus.jsonl" --kb scifact --data-dir "$SF"
  # no --configs: the standard list (ragchat.eval.configs.DEFAULT_CONFIGS)
  $RC eval retrieval --kb scifact --queries "$DATA/scifact/queries.train.jsonl" \
    --qrels "$DATA/scifact/qrels.train.tsv" --output /tmp/sf-eval-all --data-dir "$SF"
}

medquad() {
  .venv/bin/python benchmarks/eval_medquad_subset.py --data "$DATA/medquad" --out "$SUB"
  has_kb "$MQ" medquad_flat || $RC ingest "$SUB/corpus.jsonl" --kb medquad_flat --data-dir "$MQ"
  # shellcheck disable=SC2046  # one folder a line, no spaces
  has_kb "$MQ" medquad_md || $RC ingest $(cat "$SUB/paths.txt") --kb medquad_md --data-dir "$MQ"
  local configs=bm25,dense,hybrid,hybrid_rrf,dense_first,hybrid+qe,hybrid+fill,hybrid+title
  configs=$configs,hybrid+prf,hybrid_z,hybrid_z+fill,hybrid_v2,hybrid_v2+prf
  $RC eval retrieval --kb medquad_flat --queries "$SUB/queries.jsonl" --qrels "$SUB/qrels.tsv" \
    --configs "$configs" --output /tmp/mq-eval-flat --data-dir "$MQ"
  $RC eval retrieval --kb medquad_md --queries "$SUB/queries.md.jsonl" \
    --sections "$SUB/sections.tsv" --configs "$configs,hybrid+parents,hybrid_v2+parents" \
    --output /tmp/mq-eval-md --data-dir "$MQ"
}

calibrate() {
  $RC eval calibrate --kb scifact --queries "$DATA/scifact/queries.train.jsonl" \
    --qrels "$DATA/scifact/qrels.train.tsv" --output /tmp/sf-calibrate --data-dir "$SF"
  $RC eval calibrate --kb medquad_md --queries "$SUB/queries.md.jsonl" \
    --sections "$SUB/sections.tsv" --output /tmp/mq-calibrate --data-dir "$MQ"
}

case $what in
  scifact) scifact ;;
  medquad) medquad ;;
  calibrate) calibrate ;;
  all) scifact; medquad; calibrate ;;
  *) echo "usage: $0 [scifact|medquad|calibrate|all]" >&2; exit 2 ;;
esac
