#!/usr/bin/env python3
# TEST DOUBLE of a vLLM-style OpenAI-compatible model server (`vllm serve CKPT --port P
# --tensor-parallel-size N`), for evalschedd's pilots that serve (suites' serve_command) in
# tests and benchmarks. Never a product default. It speaks the real API's shape: GET /health
# (200 once loaded), GET /v1/models, POST /v1/completions (OpenAI's text completion object).
# It "loads" the checkpoint once at start, before it listens, as vLLM does: reads every file
# under it, sleeps bytes / --load-bandwidth when given, and appends one line per load to
# --load-log ("<node> <job>.<step> <checkpoint> <bytes>"), so tests can count loads per pilot.
#   fake-vllm-server.py CHECKPOINT --port P [--tensor-parallel-size N] [--host H]
#                       [--load-bandwidth BPS] [--load-log FILE]
import argparse, fcntl, json, os, socket, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser(prog="fake-vllm-server")
ap.add_argument("checkpoint")
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--host", default="0.0.0.0")
ap.add_argument("--tensor-parallel-size", type=int, default=1)
ap.add_argument("--load-bandwidth", type=float, default=0)
ap.add_argument("--load-log", default="")
args = ap.parse_args()

if not os.path.isdir(args.checkpoint):
    sys.exit(f"fake-vllm-server: checkpoint {args.checkpoint} is not a directory")
loaded = 0
for root, _, files in os.walk(args.checkpoint):
    for f in files:
        with open(os.path.join(root, f), "rb") as fh:
            while chunk := fh.read(1 << 20):
                loaded += len(chunk)
if args.load_bandwidth > 0:
    time.sleep(loaded / args.load_bandwidth)
if args.load_log:
    step = f"{os.environ.get('SLURM_JOB_ID', '-')}.{os.environ.get('SLURM_STEP_ID', '-')}"
    node = os.environ.get("SLURMD_NODENAME", socket.gethostname())
    with open(args.load_log, "a") as log:
        fcntl.flock(log, fcntl.LOCK_EX)
        log.write(f"{node} {step} {args.checkpoint} {loaded}\n")
model = os.path.basename(os.path.normpath(args.checkpoint))
served = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/v1/models":
            self.reply(200, {"object": "list", "data": [{"id": model, "object": "model", "owned_by": "vllm", "root": args.checkpoint,
                                                         "max_model_len": 4096}]})
        else:
            self.reply(404, {"object": "error", "message": f"no route {self.path}", "type": "NotFoundError", "code": 404})

    def do_POST(self):
        global served
        n = int(self.headers.get("Content-Length", "0"))
        if self.path != "/v1/completions":
            self.reply(404, {"object": "error", "message": f"no route {self.path}", "type": "NotFoundError", "code": 404})
            return
        if n > (1 << 20):
            self.reply(413, {"object": "error", "message": "request larger than 1 MiB", "type": "BadRequestError", "code": 413})
            return
        try:
            req = json.loads(self.rfile.read(n))
            prompt = req["prompt"]
        except (ValueError, KeyError, TypeError):
            self.reply(400, {"object": "error", "message": "body must be JSON with a prompt", "type": "BadRequestError", "code": 400})
            return
        served += 1
        tokens = int(req.get("max_tokens", 16))
        self.reply(200, {"id": f"cmpl-{served}", "object": "text_completion", "created": int(time.time()), "model": req.get("model", model),
                         "choices": [{"index": 0, "text": " 42", "logprobs": None, "finish_reason": "length"}],
                         "usage": {"prompt_tokens": len(str(prompt).split()), "completion_tokens": tokens,
                                   "total_tokens": len(str(prompt).split()) + tokens}})


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()
