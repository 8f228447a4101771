import { cpus, freemem, loadavg, totalmem } from "node:os";
import type Dockerode from "dockerode";

export type MachineInfo = {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  freeMemoryGiB: number;
  dockerVersion: string;
  storageDriver: string;
  cgroupVersion: string;
  runtimes: string[];
  node: string;
  loadAverage: number[];
};

export async function describeMachine(docker: Dockerode): Promise<MachineInfo> {
  const version = await docker.version();
  const info = (await docker.info()) as {
    Driver?: string;
    CgroupVersion?: string;
    Runtimes?: Record<string, unknown>;
  };
  const gib = (bytes: number) => Math.round((bytes / 1024 ** 3) * 10) / 10;
  return {
    cpuModel: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGiB: gib(totalmem()),
    freeMemoryGiB: gib(freemem()),
    dockerVersion: version.Version,
    storageDriver: info.Driver ?? "unknown",
    cgroupVersion: info.CgroupVersion ?? "unknown",
    runtimes: Object.keys(info.Runtimes ?? {}),
    node: process.version,
    loadAverage: loadavg().map((value) => Math.round(value * 100) / 100),
  };
}
