#!/usr/bin/env bash
# The shipped Prometheus rules (etc/prometheus/acme-slurm-rules.yml) and cluster dashboard
# (etc/grafana/acme-slurm-cluster-gpus.json): promtool accepts the rules and their unit tests
# pass (tests/prometheus/acme-slurm-rules-test.yml: the counts, the live goodput, both alerts);
# and against the minicluster's real Prometheus, with one 2-GPU job holding idle GPUs past
# idle_alert, every recording rule's and every panel's expression evaluates, shows those 2 GPUs
# held, idle and alerted, 0 % in use, the job's user, and no series labelled by job except the
# per-GPU table.
. "$(dirname "$0")/lib.sh"
command -v promtool >/dev/null || skip "promtool (Debian's prometheus package) is not installed"
rules=$ACME_SRC_DIR/etc/prometheus/acme-slurm-rules.yml
out=$(promtool check rules "$rules" 2>&1) || fail "promtool check rules: $out"
out=$(cd "$ACME_SRC_DIR/tests/prometheus" && promtool test rules acme-slurm-rules-test.yml 2>&1) || fail "promtool test rules: $out"
need_prometheus

all_nodes_idle
use_uniform_scenario 0
gputrace_keys idle_alert=2s
on_exit restore_plugstack
id=$(submit -N1 --gres=gpu:2 --gpu-telemetry=1 -o /dev/null --wrap 'sleep 600')
# (It runs until the test cancels it: the rules are read while it runs.)
ok=0
deadline=$((SECONDS + 120))
while ((SECONDS < deadline)); do
  [ "$(prom_query "count((acme_gpu_idle_alert == 1) * on(Hostname, gpu) group_left(hpc_job) acme_job_gpu_info{hpc_job=\"$id\"})" | cut -d'|' -f1)" = 2 ] &&
    ok=1 && break
  sleep 0.5
done
[ "$ok" -eq 1 ] || fail "job $id's two idle GPUs never showed acme_gpu_idle_alert 1 in Prometheus"
user=$(job_field "$id" UserId)
user=${user%%(*}

python3 - "$rules" "$ACME_SRC_DIR/etc/grafana/acme-slurm-cluster-gpus.json" "$ACME_PROMETHEUS_URL" "$id" "$user" <<'PY' || fail "the rules' and dashboard's queries (above)"
import json, sys, urllib.parse, urllib.request
import yaml
rules_path, dash_path, url, job, user = sys.argv[1:]
errors = []

def query(expr):
    q = urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=10) as r:
        reply = json.load(r)
    if reply.get("status") != "success":
        raise RuntimeError(reply.get("error", "query failed"))
    return reply["data"]["result"]

# The rules: each expression as Prometheus evaluates it (recording rules read by name from
# here on are expanded, since this Prometheus does not load the file).
records = {}
for group in yaml.safe_load(open(rules_path))["groups"]:
    for rule in group["rules"]:
        expr = rule["expr"]
        for name, body in records.items():
            expr = expr.replace(name, f"({body})")
        if "record" in rule:
            records[rule["record"]] = expr
        name = rule.get("record") or rule.get("alert")
        try:
            result = query(expr)
        except Exception as e:
            errors.append(f"rule {name}: {e}")
            continue
        for s in result:
            if "hpc_job" in s["metric"] and "record" in rule:
                errors.append(f"rule {name}: a series labelled by job: {s['metric']}")
        shown = sorted((s["metric"].get("user", ""), float(s["value"][1])) for s in result)
        print(f"rule {name}: {shown}")
        want = {"acme:gpus_held:count": [("", 2.0)], "acme:gpus_idle:count": [("", 2.0)],
                "acme:gpus_idle_alerted:count": [("", 2.0)], "acme:gpus_in_use:ratio": [("", 0.0)],
                "acme:user_gpus_idle:count": [(user, 2.0)]}
        if name in want and shown != want[name]:
            errors.append(f"rule {name} gives {shown}, want {want[name]}")
        if name == "AcmeGpuHeldIdle" and sorted(s["metric"].get("hpc_job") for s in result) != [job, job]:
            errors.append(f"alert {name} fires for {[s['metric'] for s in result]}, want job {job}'s 2 GPUs")

dash = json.load(open(dash_path))
if [v["name"] for v in dash["templating"]["list"]] != ["datasource"]:
    errors.append("the cluster dashboard has variables besides $datasource")
want = {"GPUs held": [2.0], "Held GPUs idle": [2.0], "Held GPUs past idle_alert": [2.0],
        "Held GPUs in use (live goodput)": [0.0], "Held GPUs in use over time": [0.0], "Idle held GPUs by user": [2.0]}
for p in dash["panels"]:
    if p.get("datasource", {}).get("uid") != "${datasource}":
        errors.append(f"panel {p['title']}: datasource is not the $datasource variable")
    for t in p["targets"]:
        try:
            result = query(t["expr"])
        except Exception as e:
            errors.append(f"panel {p['title']}: {t['expr']}: {e}")
            continue
        shown = sorted(float(s["value"][1]) for s in result)
        print(f"panel {p['title']}: {shown}")
        if p["title"] in want and shown != want[p["title"]]:
            errors.append(f"panel {p['title']} shows {shown}, want {want[p['title']]}")
        if p["type"] == "table":
            jobs = sorted(s["metric"].get("hpc_job") for s in result)
            if jobs != [job, job] or any(v < 1 for v in shown):
                errors.append(f"panel {p['title']}: rows of jobs {jobs} idle {shown}, want job {job}'s 2 GPUs")
        elif any("hpc_job" in s["metric"] for s in result):
            errors.append(f"panel {p['title']}: a series labelled by job")
for e in errors:
    print("rules:", e)
sys.exit(1 if errors else 0)
PY
scancel "$id"
