# bench/models_summary.sh - sourced by device scripts (docs/data/session*/dev*_script.sh):
#   models_summary DIR    one line per bench/h200_models.sh output file in DIR
# (PyTorch's medians from DIR/torch_models.jsonl, then for each wgnn run: the
# single run's median with its upload and wait, GPU time summed over nodes,
# the pipelined time a run, the resident time a run (the graph alone: input
# left on the GPU, outputs not read) and the agreement with PyTorch's output).
models_summary() {
  local dir=$1 f
  python3 -c 'import json,sys
for l in open(sys.argv[1]): d=json.loads(l); print("torch", d["model"], d["batch"], "%.3f" % d["median_ms"], "host-to-host %.3f" % d.get("h2h_median_ms", float("nan")))' "$dir/torch_models.jsonl"
  for f in "$dir"/wgnn_*.txt "$dir"/old_*.txt; do
    [ -e "$f" ] || continue
    printf "%-36s " "$(basename "$f")"
    sed -nE 's/.*runs: median ([0-9.]+) ms.*upload ([0-9.]+) ms.*waiting ([0-9.]+) ms/single \1 (upload \2 wait \3)/p; s/^GPU time: ([0-9.]+) ms summed.*/gpu \1/p; s/^pipelined: .* ([0-9.]+) ms a run.*(outputs [a-z ]*).*/pipelined \1 \2/p; s/^resident: .* median ([0-9.]+) ms.*/resident \1/p; s/^last_hidden_state.*max \|diff\| ([^,]*),.*-> (.*)/diff \1 \2/p' "$f" | tr "\n" " "
    echo
  done
}
