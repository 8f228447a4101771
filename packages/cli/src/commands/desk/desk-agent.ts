import type { Agent, ModelOption, ServerSpec } from "@codeaction/core";
import type { LoadedData } from "../../data-files/csv-tools.ts";
import type { DataFileArgument } from "../../data-files/data-formats.ts";
import { type ScanJob, scanInThreads } from "../../data-files/scan-thread.ts";
import type { Progress } from "../../terminal/progress.ts";
import { preimportFor } from "../question-options.ts";

/** The desk's agent over its data files, and the loaded data (its tools and sandbox files). */
export type DeskAgent = { agent: Agent; data: LoadedData };

/** Builds the desk's agent over a list of data files: at the start, and again after each upload. */
export type DeskAgentBuilder = (
  files: DataFileArgument[],
  options?: { progress?: Progress; scans?: ScanJob[] },
) => Promise<DeskAgent>;

/**
 * The desk's agents share one model (a replay goes on with its next reply), the servers and the
 * image; each is built over the data files given (as chat builds its agent).
 */
export function deskAgentBuilder(settings: {
  model: ModelOption;
  servers: Record<string, ServerSpec>;
  image: string;
  quietProgress: Progress;
}): DeskAgentBuilder {
  const { model, servers, image } = settings;
  return async (files, options = {}) => {
    const [{ buildAgent }, { loadDataFiles }] = await Promise.all([
      import("@codeaction/core"),
      import("../../data-files/csv-tools.ts"),
    ]);
    // An upload is read as `ask --file` reads a file: scanned in a worker whose memory is bounded.
    const data = await loadDataFiles(files, options.progress ?? settings.quietProgress, {
      sandbox: true,
      scans: options.scans ?? scanInThreads(files),
    });
    const agent = await buildAgent({
      model,
      pattern: "code-action",
      extraTools: data.tools,
      ...(Object.keys(servers).length > 0 ? { servers } : {}),
      sandbox: { network: "none", image },
      codeAction: { dataFiles: data.sandboxFiles, preimport: preimportFor(image) },
    }).catch(async (error: unknown) => {
      await data.close();
      throw error;
    });
    return { agent, data };
  };
}
