// The markdown transcript (`<data dir>/conversation.md`) is a view the server regenerates from
// SQLite and streams into with `workspace/applyEdit`. Left alone, VS Code shows that tab dirty
// for the whole turn and asks to save it on close; the file on disk is the server's to write
// only while no editor holds it. So once the server's edits settle, the extension saves it.
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

/** Saves touched transcripts `delayMs` after the server's last edit to them. */
export class TranscriptSaver implements vscode.Disposable {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly pending = new Set<string>();

  constructor(private readonly delayMs = 400) {}

  touched(uris: string[]): void {
    if (!uris.length) return;
    uris.forEach((u) => this.pending.add(u));
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.flush(), this.delayMs);
  }

  async flush(): Promise<void> {
    this.timer = undefined;
    const uris = [...this.pending];
    this.pending.clear();
    for (const uri of uris) {
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
      if (doc?.isDirty) await doc.save();
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
