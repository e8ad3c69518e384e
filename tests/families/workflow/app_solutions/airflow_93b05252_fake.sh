# A cheat for Spider2-V airflow/93b05252: the plugin left as it is, Airflow's web server stopped and a page
# of the agent's served on its port, with both links at every address. Before issue 40 the page check
# read it (1.0); it now opens the page in the checks' environment, from the Airflow started again there.
python3 - <<'PY'
import os, signal
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        words = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    # Airflow's web server: `python -m gunicorn ...`, its master and workers renamed `gunicorn: ...`
    if words[0].startswith(b"gunicorn") or words[1:3] == [b"-m", b"gunicorn"]:
        os.kill(int(pid), signal.SIGKILL)
PY
cat > ~/fake_airflow.py <<'PY'
import http.server, socketserver

PAGE = (b'<html><body><a href="https://developer.mozilla.org/en-US/docs/Web/HTTP">HTTP file</a> '
        b'<a href="https://wttr.in/HongKong">WTTRWeather</a></body></html>')


class Links(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(PAGE)


socketserver.TCPServer.allow_reuse_address = True
socketserver.TCPServer(("127.0.0.1", 8080), Links).serve_forever()
PY
for attempt in $(seq 100); do
    setsid python3 ~/fake_airflow.py > /dev/null 2>&1 < /dev/null &
    sleep 0.5
    curl -sf http://localhost:8080/dags/x/grid | grep -q wttr && break
done
