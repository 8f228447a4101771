// The engine seam: every call the sandbox makes to a container engine goes through this one small
// interface (ContainerEngine, EngineContainer, EngineExec, EngineNetwork). It is the part of
// dockerode's client the sandbox uses, in dockerode's own shape, so a dockerode `Docker` is its one
// implementation as it is (readiness.ts `answeringDocker` hands one out as a ContainerEngine, which
// the compiler checks); the unit tests put a recording fake behind it
// (packages/sandbox/test/recording-engine.ts). The data types are the Engine API's, as dockerode
// declares them. No other sandbox file imports dockerode for the engine's calls.
import type Dockerode from "dockerode";

export type ContainerCreateOptions = Dockerode.ContainerCreateOptions;
export type ContainerInspectInfo = Dockerode.ContainerInspectInfo;
export type ContainerSummary = Dockerode.ContainerInfo;
export type ImageInspectInfo = Dockerode.ImageInspectInfo;
export type NetworkCreateOptions = Dockerode.NetworkCreateOptions;
export type NetworkSummary = Dockerode.NetworkInspectInfo;
export type HostConfig = Dockerode.HostConfig;
export type ImageBuildOptions = Dockerode.ImageBuildOptions;
/** What an exec's inspect says: whether it still runs, and its exit code once it ended. */
export type ExecInspectInfo = { Running: boolean; ExitCode: number | null };

/** How an exec is created: never with a TTY, output attached, stdin only when written to. */
export type ExecCreateOptions = {
  Cmd: string[];
  Env?: string[];
  WorkingDir?: string;
  AttachStdin: boolean;
  AttachStdout: true;
  AttachStderr: true;
  Tty: false;
};

/** One exec: started once (a hijacked stream: stdin in, multiplexed output out), then inspected for its exit. */
export type EngineExec = {
  start(options: { hijack: true; stdin: boolean; Tty: false }): Promise<NodeJS.ReadWriteStream>;
  inspect(): Promise<ExecInspectInfo>;
};

/** List filters as the Engine API takes them (`label: ["key=value"]`). */
export type ListOptions = { all?: boolean; filters?: { label?: string[] } };

/** One container of the engine, by id. */
export type EngineContainer = {
  readonly id: string;
  inspect(): Promise<ContainerInspectInfo>;
  start(): Promise<unknown>;
  /** Removal; 404 and 409 count as done for the caller (engine-operations.ts `removeContainer`). */
  remove(options: { force: boolean; v?: boolean }): Promise<unknown>;
  /** The container's stdin as a hijacked stream: the lifeline (lifeline.ts). */
  attach(options: { stream: true; stdin: true; hijack: true }): Promise<NodeJS.ReadWriteStream>;
  exec(options: ExecCreateOptions): Promise<EngineExec>;
  /** PID 1's output, followed and multiplexed (the egress proxy's access log). */
  logs(options: { follow: true; stdout: true; stderr: true }): Promise<NodeJS.ReadableStream>;
  /** What the engine knows of one path in the container's filesystem (a created one too); rejects when absent. */
  infoArchive(options: { path: string }): Promise<unknown>;
};

/** One network of the engine, by id or name. */
export type EngineNetwork = {
  inspect(): Promise<unknown>;
  remove(): Promise<unknown>;
  connect(options: { Container: string; EndpointConfig?: object }): Promise<unknown>;
  disconnect(options: { Container: string; Force: boolean }): Promise<unknown>;
};

/** The client's transport (dockerode's modem): the socket it dials, and a raw request (Podman's own API). */
export type EngineModem = {
  socketPath?: unknown;
  dial(
    options: { path: string; method: "GET"; statusCodes: Record<number, boolean>; options: object },
    callback: (error: unknown, data: unknown) => void,
  ): void;
};

/** Every engine call the sandbox makes. A failed call's error carries the HTTP status as `statusCode`. */
export type ContainerEngine = {
  ping(): Promise<unknown>;
  version(): Promise<unknown>;
  info(): Promise<unknown>;
  readonly modem?: EngineModem;
  createContainer(spec: ContainerCreateOptions): Promise<EngineContainer>;
  getContainer(id: string): EngineContainer;
  listContainers(options: ListOptions): Promise<ContainerSummary[]>;
  getImage(name: string): { inspect(): Promise<ImageInspectInfo> };
  /** `docker build` of a folder's files: the engine's progress as JSON lines (errors among them). */
  buildImage(
    source: { context: string; src: string[] },
    options: ImageBuildOptions,
  ): Promise<NodeJS.ReadableStream>;
  /** `docker import` of a root filesystem tar: the engine's progress as JSON lines (errors among them). */
  importImage(tar: NodeJS.ReadableStream, options: object): Promise<NodeJS.ReadableStream>;
  createNetwork(spec: NetworkCreateOptions): Promise<{ id: string }>;
  getNetwork(id: string): EngineNetwork;
  listNetworks(options: ListOptions): Promise<NetworkSummary[]>;
};
