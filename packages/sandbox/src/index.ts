export type { ExecuteOptions } from "./command-run.ts";
export type { NetworkSetting, SandboxConfig, SandboxConfigInput } from "./config.ts";
export { parseSandboxConfig, parseSize } from "./config.ts";
export type { DockerEndpoint } from "./docker-connection.ts";
export { connectDocker, defaultEndpoints } from "./docker-connection.ts";
export type { EngineInfo } from "./engine/engine-info.ts";
export { engineInfo } from "./engine/engine-info.ts";
export type { EngineSettings } from "./engine/engine-settings.ts";
export type { EndpointAttempt } from "./errors/docker-unavailable-error.ts";
export { DockerUnavailableError } from "./errors/docker-unavailable-error.ts";
export { ImageBuildError } from "./errors/image-build-error.ts";
export { ImageMissingError } from "./errors/image-missing-error.ts";
export { NetworkSetupError } from "./errors/network-setup-error.ts";
export { PackageRefusedError } from "./errors/package-refused-error.ts";
export { PathRefusedError } from "./errors/path-refused-error.ts";
export { RuntimeNotRegisteredError } from "./errors/runtime-not-registered-error.ts";
export { SandboxConfigError } from "./errors/sandbox-config-error.ts";
export type { SandboxErrorCode } from "./errors/sandbox-error.ts";
export { SandboxError } from "./errors/sandbox-error.ts";
export { SecurityFlagError } from "./errors/security-flag-error.ts";
export type { ExecResult, SpawnedProcess } from "./exec.ts";
export type { FileEntry } from "./file-operations.ts";
export type { BuildImageOptions, BuildImageResult, ImageFlavour, ImageState } from "./image.ts";
export { buildImage, imageState } from "./image.ts";
export { DATA_IMAGE, DEFAULT_IMAGE } from "./images/names.ts";
export { SandboxManager } from "./manager.ts";
export type { CreateSessionOptions, SandboxManagerOptions } from "./manager-options.ts";
export type { EgressLogEntry } from "./network/access-log.ts";
export type { BuildProxyImageResult } from "./network/proxy-image.ts";
export { buildProxyImage, proxyImage } from "./network/proxy-image.ts";
export {
  type FileToPlace,
  type PlacedFile,
  type PlacingProgress,
  readOnlyFileCommand,
} from "./placed-files.ts";
export type { PoolStatus } from "./pool.ts";
export { type PrelaunchedContainer, SandboxPrelaunch } from "./prelaunch/prelaunch.ts";
export { SandboxSession } from "./session.ts";
