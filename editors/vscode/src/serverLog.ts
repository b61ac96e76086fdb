// The server's log in the Mira output channel. `mira lsp` writes its log to a daily file,
// `<home>/logs/mira.log.<UTC date>` (stdout carries the protocol; only warnings reach stderr,
// which the language client already shows). The extension follows today's file into the
// channel: today's lines first, then each new one, and the next day's file after midnight.
import * as fs from 'fs';
import * as path from 'path';
import { StringDecoder } from 'string_decoder';

/**
 * Where `mira lsp` logs, found as the server finds it (src/logging.rs reads the user config
 * file and the environment, not the project file): `MIRA_HOME`, else `[store] home` in the user
 * config file (`MIRA_CONFIG`, else `$XDG_CONFIG_HOME/mira/config.toml`, else
 * `~/.config/mira/config.toml`), else `$XDG_DATA_HOME/mira`, else `~/.local/share/mira`.
 */
export function logDir(env: NodeJS.ProcessEnv, readFile: (p: string) => string | undefined = readText): string | undefined {
  const get = (k: string) => (env[k] && env[k]!.trim() !== '' ? env[k]!.trim() : undefined);
  const fromEnv = get('MIRA_HOME');
  if (fromEnv) return path.join(fromEnv, 'logs');
  const configFile =
    get('MIRA_CONFIG') ??
    (get('XDG_CONFIG_HOME') ? path.join(get('XDG_CONFIG_HOME')!, 'mira', 'config.toml') : get('HOME') ? path.join(get('HOME')!, '.config', 'mira', 'config.toml') : undefined);
  const configured = configFile ? storeHome(readFile(configFile) ?? '') : undefined;
  if (configured) return path.join(configured, 'logs');
  const data = get('XDG_DATA_HOME') ? path.join(get('XDG_DATA_HOME')!, 'mira') : get('HOME') ? path.join(get('HOME')!, '.local', 'share', 'mira') : undefined;
  return data ? path.join(data, 'logs') : undefined;
}

/** `home` of the `[store]` table of a TOML file (a basic or literal string), if set. */
export function storeHome(toml: string): string | undefined {
  let section = '';
  for (const raw of toml.split(/\r?\n/)) {
    const line = raw.trim();
    const header = /^\[\s*([^\]]+?)\s*\]$/.exec(line);
    if (header) {
      section = header[1];
      continue;
    }
    const dotted = /^store\.home\s*=\s*(.+)$/.exec(line);
    const plain = /^home\s*=\s*(.+)$/.exec(line);
    const value = section === '' && dotted ? dotted[1] : section === 'store' && plain ? plain[1] : undefined;
    if (value === undefined) continue;
    const basic = /^"((?:[^"\\]|\\.)*)"/.exec(value);
    if (basic) return JSON.parse(`"${basic[1]}"`);
    const literal = /^'([^']*)'/.exec(value);
    if (literal) return literal[1];
  }
  return undefined;
}

function readText(p: string): string | undefined {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch {
    return undefined;
  }
}

/** Today's log file name (tracing-appender's daily rolling names files by the UTC date). */
export function logFileName(now: Date): string {
  return `mira.log.${now.toISOString().slice(0, 10)}`;
}

/** The most of today's file shown at first; older lines stay in the file. */
const FIRST_READ_MAX = 2 * 1024 * 1024;

/**
 * Follows the day's log file into `write` (whole lines only), polling its size. Starts with
 * today's lines (the last FIRST_READ_MAX bytes of them when the file is large).
 */
export class LogTail {
  private file: string | undefined;
  private offset = 0;
  private partial = '';
  private decoder = new StringDecoder('utf8');
  private timer: NodeJS.Timeout | undefined;
  private reading = false;

  constructor(
    private readonly dir: string,
    private readonly write: (line: string) => void,
    private readonly everyMs = 500,
    private readonly now: () => Date = () => new Date(),
  ) {}

  start(): void {
    if (this.timer) return;
    this.poll();
    this.timer = setInterval(() => this.poll(), this.everyMs);
    this.timer.unref?.();
  }

  /** Reads what was appended since the last poll (also at once, e.g. when the log is shown). */
  poll(): void {
    if (this.reading) return;
    this.reading = true;
    try {
      const file = path.join(this.dir, logFileName(this.now()));
      if (file !== this.file) {
        if (this.file) this.drain(this.file);
        this.file = file;
        this.offset = 0;
        this.partial = '';
        this.decoder = new StringDecoder('utf8');
        try {
          const size = fs.statSync(file).size;
          if (size > FIRST_READ_MAX) {
            this.offset = size - FIRST_READ_MAX;
            this.write(`[… ${this.offset} bytes of today's log before this are in ${file}]`);
            this.skipToLine = true;
          }
        } catch {
          // not written yet today
        }
      }
      this.drain(file);
    } finally {
      this.reading = false;
    }
  }

  private skipToLine = false;

  private drain(file: string) {
    let size: number;
    try {
      size = fs.statSync(file).size;
    } catch {
      return;
    }
    if (size < this.offset) {
      // Truncated or replaced: start over.
      this.offset = 0;
      this.partial = '';
      this.decoder = new StringDecoder('utf8');
    }
    if (size === this.offset) return;
    const fd = fs.openSync(file, 'r');
    try {
      const buf = Buffer.alloc(size - this.offset);
      const n = fs.readSync(fd, buf as unknown as Uint8Array, 0, buf.length, this.offset);
      this.offset += n;
      let text = this.partial + this.decoder.write(buf.subarray(0, n));
      if (this.skipToLine) {
        text = text.slice(text.indexOf('\n') + 1);
        this.skipToLine = false;
      }
      const lines = text.split('\n');
      this.partial = lines.pop() ?? '';
      for (const line of lines) this.write(line.replace(/\r$/, ''));
    } finally {
      fs.closeSync(fd);
    }
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
