// Arguments for Mira's commands when the user runs them from the palette or a code action
// left them to the client (docs/lsp-contract.md, code actions: "the client prompts for the text").
// Pure: the editor state and the prompts come in as data and functions.

export interface Pos {
  line: number;
  character: number;
}
export interface Rng {
  start: Pos;
  end: Pos;
}

/** Where the user is: the active editor's document and selection, if any. */
export interface EditorSpot {
  uri: string;
  selection: Rng;
  /** Diagnostics overlapping the selection, already in LSP shape. */
  diagnostics: unknown[];
}

export interface Prompts {
  input(prompt: string, placeHolder?: string): Promise<string | undefined>;
  number(prompt: string): Promise<number | undefined>;
}

const empty = (r: Rng) => r.start.line === r.end.line && r.start.character === r.end.character;

/** The commands that need an editor location when run without arguments. */
export const NEEDS_EDITOR = new Set(['mira.askSymbol', 'mira.explain', 'mira.fix']);

export class NeedsEditor extends Error {
  constructor(command: string) {
    super(`${command} works on the active editor: open a file and place the cursor (or select code) first.`);
  }
}

/**
 * Fills in the arguments of a command run without any, prompting where Mira needs text.
 * Returns undefined when the user dismissed a prompt (the command is then not sent).
 */
export async function fillArguments(
  command: string,
  args: unknown[],
  spot: EditorSpot | undefined,
  prompts: Prompts,
): Promise<unknown[] | undefined> {
  const first = args[0] as Record<string, unknown> | undefined;
  const where = spot ? { uri: spot.uri, range: spot.selection } : {};
  switch (command) {
    case 'mira.ask': {
      if (args.length) return args;
      const question = await prompts.input('Ask Mira', 'Why is this slow?');
      if (!question?.trim()) return undefined;
      return [{ question, ...(spot ? { uri: spot.uri, range: spot.selection, position: spot.selection.start } : {}) }];
    }
    case 'mira.edit': {
      if (first && typeof first === 'object' && typeof first.instruction === 'string' && first.instruction.trim()) return args;
      const instruction = await prompts.input('Mira: how should the selection change?', 'Extract the loop into a function');
      if (!instruction?.trim()) return undefined;
      return [{ ...(first && typeof first === 'object' ? first : where), instruction }];
    }
    case 'mira.remember': {
      if (first && typeof first === 'object' && typeof first.text === 'string' && first.text.trim()) return args;
      if (typeof first === 'string') return args;
      const text = await prompts.input('Mira: what should I remember?', 'We use tabs in Go files');
      if (!text?.trim()) return undefined;
      const anchor = first && typeof first === 'object' ? first : spot && !empty(spot.selection) ? where : {};
      return [{ ...anchor, text }];
    }
    case 'mira.recall': {
      if (args.length) return args;
      const query = await prompts.input('Mira: recall what?', 'error handling');
      return query?.trim() ? [{ query }] : undefined;
    }
    case 'mira.forget':
    case 'mira.applyProposal':
    case 'mira.rejectProposal': {
      if (args.length) return args;
      const what = command === 'mira.forget' ? 'memory' : 'proposal';
      const n = await prompts.number(`Mira: which ${what}? (its number)`);
      if (n === undefined) return undefined;
      return [command === 'mira.forget' ? { id: n } : { proposal: n }];
    }
    case 'mira.askSymbol':
      if (args.length) return args;
      if (!spot) throw new NeedsEditor(command);
      return [{ uri: spot.uri, position: spot.selection.start }];
    case 'mira.explain':
      if (args.length) return args;
      if (!spot) throw new NeedsEditor(command);
      return [{ uri: spot.uri, range: spot.selection }];
    case 'mira.fix':
      if (args.length) return args;
      if (!spot) throw new NeedsEditor(command);
      return [{ uri: spot.uri, range: spot.selection, diagnostics: spot.diagnostics }];
    default:
      return args;
  }
}

/** Commands whose work continues in a turn the chat view should show. */
export const STARTS_TURN = new Set(['mira.ask', 'mira.askSymbol', 'mira.explain', 'mira.fix', 'mira.edit']);

/** Parses a number typed by the user; "#12" and " 12 " are fine. */
export function parseId(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const t = s.trim().replace(/^#/, '');
  return /^\d+$/.test(t) ? Number(t) : undefined;
}
