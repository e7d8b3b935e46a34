#!/usr/bin/env python3
# TEST DOUBLE of an external OpenAI-compatible model server (vLLM, llama.cpp, Ollama): it speaks
# POST /v1/chat/completions as they do, but "thinks" by the model name it is asked for, so tests
# choose the answer. Never a product default; used by tests/unit/diagnose_llm_test.cpp.
#   fake:CATEGORY/REASON  a valid answer quoting the tail's last line that has "error"/"fail"
#   fake-slow             answers after 30 s (a timeout must cut it)
#   fake-garbage          content that is not JSON
#   fake-invented         a reason not in the taxonomy
#   fake-made-up          evidence the log does not hold
# Usage: fake-llm-server.py PORT_FILE RECORD_FILE [CERT KEY]  (writes its port; each request body
# to RECORD_FILE; with CERT and KEY it speaks https, as a site's TLS-fronted server does)
import json, sys, time, re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port_file, record_file = sys.argv[1], sys.argv[2]

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(record_file, "wb") as f:
            f.write(json.dumps({"path": self.path, "authorization": self.headers.get("Authorization"),
                                "body": json.loads(body)}).encode())
        req = json.loads(body)
        model = req["model"]
        tail = req["messages"][-1]["content"]
        lines = [l for l in tail.split("\n") if re.search(r"(?i)error|fail", l)]
        evidence = lines[-1].strip() if lines else ""
        if model == "fake-slow":
            time.sleep(30)
        if model.startswith("fake:"):
            cat, reason = model[5:].split("/")
            content = json.dumps({"category": cat, "reason": reason, "confidence": 0.8, "evidence": evidence})
        elif model == "fake-invented":
            content = json.dumps({"category": "infrastructure", "reason": "cosmic_rays", "confidence": 0.9, "evidence": evidence})
        elif model == "fake-made-up":
            content = json.dumps({"category": "infrastructure", "reason": "network_error", "confidence": 0.9,
                                  "evidence": "ibv_poll_cq error: transport retry counter exceeded"})
        else:
            content = "I think it was the network, probably."
        out = json.dumps({"id": "x", "object": "chat.completion", "model": model,
                          "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                       "finish_reason": "stop"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
if len(sys.argv) > 4:
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[3], sys.argv[4])
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
