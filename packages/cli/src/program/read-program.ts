import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { CliError } from "../errors/cli-error.ts";

/**
 * The text of a Python program file (a relative path is `cwd`'s, the command's folder), or a
 * CliError naming the file and why it cannot be read.
 */
export async function readProgramFile(file: string, cwd: string): Promise<string> {
  try {
    return await readFile(resolve(cwd, file), "utf8");
  } catch (error) {
    throw new CliError(
      `Cannot read the program ${file}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`,
      { code: "program-missing", cause: error },
    );
  }
}
