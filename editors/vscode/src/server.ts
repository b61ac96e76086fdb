// Finding the `mira` binary: the `mira.path` setting, else PATH, else a message with the
// install command. Pure apart from the file-system probe, which is injectable for tests.
import * as fs from 'fs';
import * as path from 'path';

export const INSTALL_HINT =
  'Install it with `cargo install --path .` in a Mira checkout (or put `mira` on PATH), ' +
  'or set "mira.path" to the binary.';

export type Probe = (file: string) => boolean;

const isExecutable: Probe = (file) => {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
};

export type Resolved = { ok: true; command: string } | { ok: false; message: string };

export function resolveServer(
  setting: string | undefined,
  envPath: string | undefined,
  probe: Probe = isExecutable,
  platform: NodeJS.Platform = process.platform,
): Resolved {
  const configured = setting?.trim();
  if (configured) {
    return probe(configured)
      ? { ok: true, command: configured }
      : { ok: false, message: `Mira: "mira.path" is ${configured}, which is not an executable file. ${INSTALL_HINT}` };
  }
  const exe = platform === 'win32' ? 'mira.exe' : 'mira';
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, exe);
    if (probe(candidate)) return { ok: true, command: candidate };
  }
  return { ok: false, message: `Mira: the \`mira\` binary was not found on PATH. ${INSTALL_HINT}` };
}

/** The provider keys Mira reads from its environment; the names are Mira's config contract. */
export const KEY_VARIABLES = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'DEEPSEEK_API_KEY'] as const;
export type KeyVariable = (typeof KEY_VARIABLES)[number];

/**
 * The server's environment: VS Code's own, plus keys from SecretStorage for variables the
 * environment does not already set (the environment wins, as it does for Mira everywhere).
 */
export function serverEnv(
  base: NodeJS.ProcessEnv,
  stored: Partial<Record<KeyVariable, string>>,
): NodeJS.ProcessEnv {
  const env = { ...base };
  for (const name of KEY_VARIABLES) {
    const value = stored[name];
    if (value && !env[name]) env[name] = value;
  }
  return env;
}
