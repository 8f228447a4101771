export type { SandboxConfigInput, SandboxErrorCode } from "@codeaction/sandbox";
export { SandboxConfigError, SandboxError } from "@codeaction/sandbox";
export { CodeActionAgent, type ResumeOptions } from "./agent.ts";
export type { Budget, BudgetLimit, ModelPrice, Pricing, RunUsage } from "./budget/usage.ts";
export type { Agent } from "./build-agent.ts";
export { buildAgent } from "./build-agent.ts";
export type { BuildAgentOptions, CodeActionOptions } from "./build-agent-options.ts";
export type { DiscoveryOptions } from "./discovery/discovery-options.ts";
export type { CallLogEntry, CallLogLimits } from "./durable/call-log.ts";
export { createFileRunStore, type FileRunStoreOptions } from "./durable/file-run-store.ts";
export type { RunRecord } from "./durable/run-record.ts";
export {
  type PendingCall,
  pendingArgsDigest,
  type ResumeDecision,
  type RunState,
  type StateMessage,
} from "./durable/run-state.ts";
export type { RunStore } from "./durable/run-store.ts";
export { type RunStoreVerification, verifyFileRunStore } from "./durable/run-store-log.ts";
export { createFileUsedStates, type UsedStates } from "./durable/used-states.ts";
export { AbortError } from "./errors/abort-error.ts";
export { AttemptsExhaustedError } from "./errors/attempts-exhausted-error.ts";
export { BudgetExceededError } from "./errors/budget-exceeded-error.ts";
export type { CodeActionErrorCode } from "./errors/code-action-error.ts";
export { CodeActionError } from "./errors/code-action-error.ts";
export { ConfigError } from "./errors/config-error.ts";
export type { SampleRun } from "./errors/disagreement-error.ts";
export { DisagreementError } from "./errors/disagreement-error.ts";
export { InterruptRefusedError } from "./errors/interrupt-refused-error.ts";
export { MaxIterationsError } from "./errors/max-iterations-error.ts";
export { McpServerError } from "./errors/mcp-server-error.ts";
export { McpToolError } from "./errors/mcp-tool-error.ts";
export { ModelCallError } from "./errors/model-call-error.ts";
export { type DivergentCall, ReplayDivergenceError } from "./errors/replay-divergence-error.ts";
export { ResumeStateError } from "./errors/resume-state-error.ts";
export { SandboxRunError } from "./errors/sandbox-run-error.ts";
export { SandboxUnavailableError } from "./errors/sandbox-unavailable-error.ts";
export { StepLimitError, type StepRecord } from "./errors/step-limit-error.ts";
export { ThreadError, type ThreadErrorReason } from "./errors/thread-error.ts";
export { ToolCallingUnsupportedError } from "./errors/tool-calling-unsupported-error.ts";
export { ToolInputError } from "./errors/tool-input-error.ts";
export { ToolValueError } from "./errors/tool-value-error.ts";
export type { ConnectedServers, ConnectServersOptions, ServerSpec } from "./mcp/connect.ts";
export { connectServers } from "./mcp/on-demand.ts";
export { parseServerCommand } from "./mcp/parse-server-command.ts";
export { type ChatModelRunnable, loadModel, type ModelOption } from "./model/model.ts";
export {
  isRetryable as isRetryableModelFailure,
  type ModelFailureCause,
  maximumRetryAfterMs,
  modelFailureCause,
  providerText as providerMessage,
  retryAfterMs as modelRetryAfterMs,
} from "./model/model-failure.ts";
export type {
  OutputFile,
  OutputFileLimits,
  RefusedOutputFile,
} from "./output/output-files.ts";
export { defaultOutputFileLimits, outputDirectory } from "./output/output-files.ts";
export {
  type CodeActionSandboxOptions,
  createCodeActionSandbox,
} from "./program/code-action-sandbox.ts";
export type {
  ProgramRunner,
  ProgramRunnerOptions,
  ProgramRunResult,
  RunOptions as ProgramRunOptions,
} from "./program/program-runner.ts";
export { createProgramRunner } from "./program/program-runner.ts";
export { recordRun } from "./program/record-run.ts";
export { type ReplayOptions, type ReplayReport, replayRun } from "./program/replay-run.ts";
export type { ProgramRun } from "./program/run-program.ts";
export { defaultSandboxDescription } from "./prompt/prompt.ts";
export { redactSecrets, redactUrls } from "./redact.ts";
export { createFileThreadStore, type ThreadStore } from "./steps/file-thread-store.ts";
export type { RunnerThreadOptions } from "./steps/runner-threads.ts";
export type { ResponseFormat, StructuredOf } from "./structured-answer.ts";
export { fromLangChainTool } from "./tools/from-langchain.ts";
export type { JsonSchemaType } from "./tools/json-schema-type.ts";
export type { JsonSchema, ToolCallContext, ToolSpec } from "./tools/tool-spec.ts";
export type { ToolsRunner, ToolsRunnerOptions } from "./tools-pattern/runner.ts";
export { createToolsRunner } from "./tools-pattern/runner.ts";
export { createShellTools, type StartingSession } from "./tools-pattern/shell-tools.ts";
export type { ObserveBuildOptions } from "./tracing/observe-options.ts";
export { type ReplyProgram, readReplyProgram } from "./turn/extract-program.ts";
export type {
  AgentEvent,
  AgentInput,
  AgentInputLike,
  AgentResult,
  AnsweredResult,
  ApprovalDecision,
  ApprovalHook,
  ApprovalInterrupt,
  ApprovalRequest,
  Attempt,
  AttemptStatus,
  ChatMessageInput,
  InterruptedResult,
  MessageRole,
  MessageText,
  OutputBytes,
  RunInterrupt,
  ThreadReport,
  ToolCallRecord,
} from "./types.ts";
