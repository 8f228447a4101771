import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import type Dockerode from "dockerode";
import { DEFAULT_IMAGE } from "../src/images/names.ts";

/**
 * Test fixture (used by the network docker tests only): a static HTTP server on Docker's default
 * bridge, in the project's own sandbox image, serving /hello.txt and a PEP 503 "simple" index with one
 * hand-made wheel (codeaction-probe 1.0, `codeaction_probe.ANSWER == 42`). Tests reach it through
 * pinned names; nothing here talks to anything outside the machine.
 */
const fixtureServerSource = String.raw`
import base64, hashlib, http.server, os, zipfile
root = "/srv"
os.makedirs(root + "/simple/codeaction-probe", exist_ok=True)
open(root + "/hello.txt", "w").write("hello from the fixture\n")
files = {
  "codeaction_probe/__init__.py": "ANSWER = 42\n",
  "codeaction_probe-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: codeaction-probe\nVersion: 1.0\n",
  "codeaction_probe-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
def digest(text):
  return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
record = "".join(f"{name},{digest(text)},{len(text.encode())}\n" for name, text in files.items())
record += "codeaction_probe-1.0.dist-info/RECORD,,\n"
wheel = "codeaction_probe-1.0-py3-none-any.whl"
with zipfile.ZipFile(f"{root}/simple/codeaction-probe/{wheel}", "w") as archive:
  for name, text in files.items():
    archive.writestr(name, text)
  archive.writestr("codeaction_probe-1.0.dist-info/RECORD", record)
open(root + "/simple/index.html", "w").write('<a href="codeaction-probe/">codeaction-probe</a>')
open(root + "/simple/codeaction-probe/index.html", "w").write(f'<a href="{wheel}">{wheel}</a>')
os.chdir(root)
http.server.ThreadingHTTPServer(("0.0.0.0", 80), http.server.SimpleHTTPRequestHandler).serve_forever()
`;

export type FixtureServer = {
  container: Dockerode.Container;
  /** Its address on the default bridge (a private address: reach it through a pinned name). */
  address: string;
  /** The file name of pip's wheel, when the host had one to serve (see servePipWheel). */
  pipWheel: string | undefined;
  remove: () => Promise<void>;
};

export async function startFixtureServer(
  docker: Dockerode,
  options: { name: string },
): Promise<FixtureServer> {
  const container = await docker.createContainer({
    Image: DEFAULT_IMAGE,
    name: options.name,
    User: "0:0",
    Cmd: ["python3", "-c", fixtureServerSource],
    Labels: { "codeaction.test": options.name },
    HostConfig: {
      NetworkMode: "bridge",
      CapDrop: ["ALL"],
      CapAdd: ["NET_BIND_SERVICE"],
      Memory: 256 * 1024 ** 2,
    },
  });
  const remove = async () => {
    await container.remove({ force: true }).catch(() => undefined);
  };
  try {
    await container.start();
    const address = (await container.inspect()).NetworkSettings.Networks.bridge?.IPAddress;
    if (!address) throw new Error("the fixture server has no address on the bridge");
    return { container, address, pipWheel: await servePipWheel(container), remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

/** Copies the host's pip wheel (Debian's python3-pip-whl) into the server: the sandbox image may lack pip. */
async function servePipWheel(server: Dockerode.Container): Promise<string | undefined> {
  const folder = "/usr/share/python-wheels";
  const wheel = existsSync(folder)
    ? readdirSync(folder).find((name) => /^pip-.*\.whl$/.test(name))
    : undefined;
  if (!wheel) return undefined;
  const tar = spawn("tar", ["-c", "-C", folder, wheel], { stdio: ["ignore", "pipe", "inherit"] });
  await server.putArchive(tar.stdout, { path: "/srv" });
  return wheel;
}
