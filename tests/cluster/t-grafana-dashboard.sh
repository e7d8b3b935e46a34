#!/usr/bin/env bash
# The shipped Grafana dashboard (etc/grafana/acme-slurm-job-gpus.json, installed under
# /usr/share/acme-slurm/grafana) works against a real Prometheus: with its variables set to a
# running traced 2-node job (one GPU on each), every panel's expression returns that job's data
# (one series per GPU for the per-GPU panels, per node for the node slowness panel), and the
# variables' own queries offer the job, its user and its nodes.
. "$(dirname "$0")/lib.sh"
need_prometheus

dashboard=$ACME_SRC_DIR/etc/grafana/acme-slurm-job-gpus.json
# Busy GPUs drawing 250 W with 20 GiB in use, so that every panel has something to show.
gpus=$(cat "$ACME_MINICLUSTER_DIR/gpus")
text=""
for ((g = 0; g < gpus; g++)); do
  text+=$(printf '[[gpu]]\nminor = %d\nutil = 70\npower_mw = 250000\nmem_used = %d\n' "$g" $((20 * 1024 * 1024 * 1024)))$'\n'
done
use_scenario <<<"$text"
# The samplers share their work rates (the node slowness panel) every 0.5 s instead of 30 s.
small_stall_windows
on_exit 'rm -f "$ACME_MINICLUSTER_DIR/nvml/scenarios/default.toml"; restore_plugstack'
id=$(submit -N2 --gres=gpu:1 --gpu-telemetry=1 -o /dev/null --wrap 'sleep 600')
# (It runs until the test cancels it: the panels are read while it runs, however long Prometheus
# takes to have them.)
ok=0
deadline=$((SECONDS + 120))
while ((SECONDS < deadline)); do
  # Both GPUs, each scraped a few times (increase() and the *_over_time panels need two points),
  # and both nodes' slowness.
  [ "$(prom_query "count(count_over_time(acme_job_gpu_info{hpc_job=\"$id\"}[1m]) >= 3)" | cut -d'|' -f1)" = 2 ] &&
    [ "$(prom_query "count(acme_job_node_slowness{hpc_job=\"$id\"})" | cut -d'|' -f1)" = 2 ] &&
    ok=1 && break
  sleep 0.5
done
[ "$ok" -eq 1 ] || fail "job $id's two GPUs and two nodes' slowness never appeared in Prometheus"
node=$(job_nodes "$id" | paste -sd,)
user=$(job_field "$id" UserId)
user=${user%%(*}

python3 - "$dashboard" "$ACME_PROMETHEUS_URL" "$id" "$node" "$user" <<'PY' || fail "the dashboard's queries (above)"
import json, re, sys, urllib.parse, urllib.request
path, url, job, node, user = sys.argv[1:]
nodes = node.split(",")
dash = json.load(open(path))
errors = []

def get(api, params):
    q = urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen(f"{url}{api}?{q}", timeout=10) as r:
        reply = json.load(r)
    if reply.get("status") != "success":
        raise RuntimeError(reply.get("error", "query failed"))
    return reply["data"]

# What Grafana puts in for the variables, its own range and its step (the minicluster's scrape
# interval).
values = {"jobid": job, "node": ".*", "user": ".*", "__range": "2m", "__interval": "1s"}
def expand(expr):
    out = re.sub(r"\$\{?(\w+)\}?", lambda m: values.get(m.group(1), m.group(0)), expr)
    if "$" in out:
        errors.append(f"unexpanded variable in {expr!r}")
    return out

names = {v["name"] for v in dash["templating"]["list"]}
for v in ("datasource", "jobid", "node", "user"):
    if v not in names:
        errors.append(f"no ${v} variable")

# Variables: label_values(SELECTOR, LABEL) is Grafana's /api/v1/series lookup.
wanted = {"user": [user], "jobid": [job], "node": nodes}
for v in dash["templating"]["list"]:
    if v["type"] != "query":
        continue
    q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
    m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q)
    if not m:
        errors.append(f"variable {v['name']}: not a label_values() query: {q}")
        continue
    series = get("/api/v1/series", {"match[]": expand(m.group(1)), "start": "0"})
    offered = {s.get(m.group(2)) for s in series}
    if not set(wanted[v["name"]]) <= offered:
        errors.append(f"variable {v['name']} ({q}) offers {sorted(x for x in offered if x)}, not {wanted[v['name']]}")

ids, titles = set(), 0
for p in dash["panels"]:
    titles += 1
    if p["id"] in ids:
        errors.append(f"panel id {p['id']} twice")
    ids.add(p["id"])
    if p.get("datasource", {}).get("uid") != "${datasource}":
        errors.append(f"panel {p['title']}: datasource is not the $datasource variable")
    for t in p["targets"]:
        try:
            result = get("/api/v1/query", {"query": expand(t["expr"])})["result"]
        except Exception as e:
            errors.append(f"panel {p['title']}: {t['expr']}: {e}")
            continue
        per_gpu = "{{Hostname}} GPU {{gpu}}" == t.get("legendFormat") or p["type"] == "table"
        per_node = "{{Hostname}}" == t.get("legendFormat")
        want = 2 if per_gpu or per_node else 1
        if len(result) != want:
            errors.append(f"panel {p['title']}: {len(result)} series for job {job}, want {want}: {t['expr']}")
            continue
        for s in result:
            if (per_gpu or per_node) and (s["metric"].get("hpc_job") != job or s["metric"].get("Hostname") not in nodes):
                errors.append(f"panel {p['title']}: a series not of job {job} on {node}: {s['metric']}")
        print(f"{p['title']}: {[s['value'][1] for s in result]}")
        if p["title"] == "Job GPUs" and result[0]["value"][1] != "2":
            errors.append(f"Job GPUs shows {result[0]['value'][1]}, want 2")
        shown = [float(s["value"][1]) for s in result]
        expect = {"GPU utilisation": 70, "Mean GPU utilisation": 70, "Power draw": 250, "GPU memory used": 20480,
                  "Node slowness (1: typical)": 1}
        if p["title"] in expect and any(v != expect[p["title"]] for v in shown):
            errors.append(f"{p['title']} shows {shown}, want {expect[p['title']]}")
        if p["title"] in ("Energy in range", "GPU memory used (% of total)") and not all(v > 0 for v in shown):
            errors.append(f"{p['title']} shows {shown}, want more than 0")
if titles < 8:
    errors.append(f"only {titles} panels")
for e in errors:
    print("dashboard:", e)
sys.exit(1 if errors else 0)
PY
scancel "$id"
