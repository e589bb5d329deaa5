// How an action's process talks to the runner: the files of one phase ($GITHUB_OUTPUT,
// $GITHUB_ENV, $GITHUB_PATH, $GITHUB_STATE, $GITHUB_STEP_SUMMARY), read after it ran, and the
// workflow commands it prints on stdout that still matter (`::set-output name=x::v`, deprecated
// but used, and `::save-state name=x::v`; `::add-mask::` is handled by the log itself, log.ts;
// `::error::`, `::warning::` and `::notice::` lines are shown as they are).
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FILE_COMMAND_LIMITS, parseFileCommands } from "../files.ts";
import { readStepFiles, type StepFiles } from "../steps.ts";
import { ActionProblem, type ActionHost } from "../action-host.ts";

/** The files of one phase of an action, plus its state file. */
export interface PhaseFiles extends StepFiles {
  state: string;
}

/** Creates a phase's files, fresh and empty, under `temp/_runner_file_commands/`. */
export function phaseFiles(temp: string): PhaseFiles {
  const dir = join(temp, "_runner_file_commands");
  mkdirSync(dir, { recursive: true });
  const key = randomUUID();
  const f = (name: string) => {
    const p = join(dir, `${name}_${key}`);
    writeFileSync(p, "");
    return p;
  };
  return { output: f("set_output"), env: f("set_env"), path: f("add_path"), summary: f("step_summary"), state: f("save_state") };
}

/** The environment variables naming a phase's files. */
export function phaseEnv(files: PhaseFiles): Record<string, string> {
  return { GITHUB_OUTPUT: files.output, GITHUB_ENV: files.env, GITHUB_PATH: files.path, GITHUB_STEP_SUMMARY: files.summary, GITHUB_STATE: files.state };
}

/**
 * Reads a phase's files after it ran: env and PATH go to the job through the host (later steps
 * see them), outputs and state are answered. A malformed file is an ActionProblem.
 */
export async function takePhaseFiles(host: ActionHost, files: PhaseFiles): Promise<{ outputs: Record<string, string>; state: Record<string, string> }> {
  const writes = readStepFiles(files);
  if (!writes.ok) throw new ActionProblem(writes.error);
  for (const [k, v] of writes.env) host.exportEnv(k, v);
  // The last written first: add in reverse so the first of the list ends up in front.
  for (const dir of [...writes.path].reverse()) host.addPath(dir);
  const stateText = await Bun.file(files.state).text();
  if (stateText.length > FILE_COMMAND_LIMITS.bytes) throw new ActionProblem(`GITHUB_STATE is larger than ${FILE_COMMAND_LIMITS.bytes} bytes`);
  // State names follow the output rule (letters, digits, `_` and `-`).
  const state = parseFileCommands(stateText, "output");
  if (!state.ok) throw new ActionProblem(state.error.replaceAll("GITHUB_OUTPUT", "GITHUB_STATE").replace("a valid output name", "a valid state name"));
  return { outputs: Object.fromEntries(writes.outputs), state: Object.fromEntries(state.entries) };
}

/** Longest stdout line looked at for a command (longer ones are shown, not read). */
const COMMAND_LINE_MAX = 1024 * 1024;

/** GitHub's escaping of a command's value and properties. */
function decodeCommand(s: string, property: boolean): string {
  let out = s.replaceAll("%0D", "\r").replaceAll("%0A", "\n");
  if (property) out = out.replaceAll("%3A", ":").replaceAll("%2C", ",");
  return out.replaceAll("%25", "%");
}

/** Reads `::set-output` and `::save-state` lines from a process's raw stdout, as it comes. */
export class StdoutCommands {
  private line = "";
  readonly outputs: Record<string, string> = {};
  readonly state: Record<string, string> = {};
  private entries = 0;

  /** Takes raw output. */
  push(text: string): void {
    let rest = text;
    for (;;) {
      const nl = rest.indexOf("\n");
      if (nl < 0) {
        if (this.line.length + rest.length <= COMMAND_LINE_MAX) this.line += rest;
        else this.line = "\u0000";
        return;
      }
      const whole = this.line + rest.slice(0, nl);
      this.line = "";
      rest = rest.slice(nl + 1);
      this.command(whole.endsWith("\r") ? whole.slice(0, -1) : whole);
    }
  }

  /** The process ended: a last line without its newline. */
  end(): void {
    if (this.line) this.command(this.line);
    this.line = "";
  }

  private command(line: string): void {
    if (!line.startsWith("::") || this.entries >= FILE_COMMAND_LIMITS.entries) return;
    const m = /^::(set-output|save-state)\s+([^:]*)::(.*)$/s.exec(line);
    if (!m) return;
    const props = Object.fromEntries(
      m[2]!
        .split(",")
        .map((p) => p.trim().split("="))
        .filter((kv) => kv.length === 2)
        .map(([k, v]) => [k!, decodeCommand(v!, true)]),
    );
    const name = props.name;
    if (!name || name.length > FILE_COMMAND_LIMITS.nameChars) return;
    this.entries++;
    (m[1] === "set-output" ? this.outputs : this.state)[name] = decodeCommand(m[3]!, false);
  }
}
