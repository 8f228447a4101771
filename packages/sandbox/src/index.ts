export type { NetworkSetting, SandboxConfig, SandboxConfigInput } from "./config.ts";
export {
  defaultImage,
  execMarkerName,
  hintForUnknownKey,
  parseSandboxConfig,
  parseSize,
  sandboxOptionNames,
} from "./config.ts";
export { buildContainerSpec, findSpecProblems, verifyContainerSpec } from "./container-spec.ts";
export type { DockerEndpoint } from "./docker-connection.ts";
export { connectDocker, defaultEndpoints } from "./docker-connection.ts";
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
export { SandboxError, type SandboxErrorCode } from "./errors/sandbox-error.ts";
export { SecurityFlagError } from "./errors/security-flag-error.ts";
export type { ExecResult, SpawnedProcess } from "./exec.ts";
export type { BuildImageOptions, BuildImageResult, ImageFlavour, ImageState } from "./image.ts";
export { buildImage, DATA_IMAGE, DEFAULT_IMAGE, imageName, imageState } from "./image.ts";
export { labelKeys } from "./labels.ts";
export type { CreateSessionOptions, SandboxManagerOptions } from "./manager.ts";
export { defaultDeadlineSeconds, SandboxManager } from "./manager.ts";
export type { EgressLogEntry } from "./network/access-log.ts";
export { restrictedPreset } from "./network/network-policy.ts";
export type { BuildProxyImageResult } from "./network/proxy-image.ts";
export { buildProxyImage, proxyImage } from "./network/proxy-image.ts";
export type { SweptNetwork } from "./network/sweep-networks.ts";
export { sweepNetworks } from "./network/sweep-networks.ts";
export { resolveSandboxPath } from "./paths.ts";
export type { PoolStatus } from "./pool.ts";
export type { ExecuteOptions, FileEntry } from "./session.ts";
export { SandboxSession } from "./session.ts";
export type { SweptContainer } from "./sweep.ts";
export { sweepContainers } from "./sweep.ts";
