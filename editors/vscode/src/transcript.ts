// The markdown transcript (`<data dir>/conversation.md`) is a view the server regenerates from
// SQLite. While no tab shows it (the chat view declines the server's showDocument) the server
// writes the file; once a tab shows it, the server streams into it with `workspace/applyEdit`.
// Left alone, VS Code shows that tab dirty for the whole turn and asks to save it on close; the
// file on disk is the server's to write only while no editor holds it. So once the server's
// edits settle, the extension saves it.
import * as vscode from 'vscode';

/** The transcript files a `workspace/applyEdit` touches (its `documentChanges` or `changes`). */
export function transcriptTargets(edit: {
  documentChanges?: ({ textDocument?: { uri: string } } | { kind: string })[];
  changes?: Record<string, unknown>;
}): string[] {
  const uris = [
    ...(edit.documentChanges ?? []).flatMap((c) => ('textDocument' in c && c.textDocument ? [c.textDocument.uri] : [])),
    ...Object.keys(edit.changes ?? {}),
  ];
  return [...new Set(uris.filter(isTranscript))];
}

export function isTranscript(uri: string): boolean {
  return /\/conversation\.md$/.test(uri);
}

/**
 * Saves the transcripts the server edits, `delayMs` after its last edit to them.
 *
 * `isDirty` is not always current when an edit's `applied` answer arrives: the extension host
 * hears of the dirty state in a message of its own, which can come after it (and after
 * `mira/turnFinished`). A save that found the document clean would leave it dirty for good,
 * so the saver also watches the document: while the server's edits are recent (`graceMs`),
 * a transcript that turns dirty is saved once it settles, and a save that failed is tried
 * again.
 */
export class TranscriptSaver implements vscode.Disposable {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly pending = new Set<string>();
  /** When the server last edited each transcript (ms since the epoch). */
  private readonly edited = new Map<string, number>();
  private readonly failures = new Map<string, number>();
  private readonly watch: vscode.Disposable;

  constructor(
    private readonly delayMs = 400,
    private readonly graceMs = 15_000,
  ) {
    this.watch = vscode.workspace.onDidChangeTextDocument((e) => {
      const uri = e.document.uri.toString();
      const at = this.edited.get(uri);
      if (at !== undefined && Date.now() - at < this.graceMs && e.document.isDirty) this.schedule([uri]);
    });
  }

  touched(uris: string[]): void {
    const now = Date.now();
    // A new edit from the server starts a new round of attempts.
    uris.forEach((u) => (this.edited.set(u, now), this.failures.delete(u)));
    this.schedule(uris);
  }

  private schedule(uris: string[]): void {
    if (!uris.length) return;
    uris.forEach((u) => this.pending.add(u));
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.flush().catch(() => {}), this.delayMs);
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const uris = [...this.pending];
    this.pending.clear();
    const retry: string[] = [];
    for (const uri of uris) {
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
      if (!doc?.isDirty) continue;
      const saved = await doc.save().then(
        (ok) => ok,
        () => false,
      );
      if (saved || !doc.isDirty) {
        this.failures.delete(uri);
        continue;
      }
      const failed = (this.failures.get(uri) ?? 0) + 1;
      this.failures.set(uri, failed);
      if (failed < 3) retry.push(uri);
    }
    this.schedule(retry);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.watch.dispose();
  }
}
