"""llama.cpp's own HTTP server (xllamacpp) on a free loopback port, for tests/it/local_model.rs.

argv: MODEL.gguf N_CTX — prints `listening http://127.0.0.1:PORT` once the model is loaded,
then serves until its stdin closes (the test process ended, however it ended).
"""

import sys

import xllamacpp as xlc

p = xlc.CommonParams()
p.model.path = sys.argv[1]
p.port = 0
p.n_ctx = int(sys.argv[2])
p.cpuparams.n_threads = 2
p.use_jinja = True
server = xlc.Server(p)
print("listening", server.listening_address, flush=True)
sys.stdin.read()
