// The chat's model: turns from `mira/history`, then live `mira/*` notifications applied in
// arrival order. Pure (no DOM, no VS Code) so it is unit-tested under node.

/** One entry of a turn as `mira/history` returns it (Rust `conversation::Entry`). */
export interface HistoryEntry {
  kind: 'user' | 'assistant' | 'reasoning' | 'tool_call' | 'tool_result';
  text: string;
  tool?: string;
  partial?: boolean;
  isError?: boolean;
}

/** One turn as `mira/history` returns it (Rust `conversation::TurnView`). */
export interface HistoryTurn {
  turn: string;
  startedAt: number;
  status: TurnStatus;
  provider: string;
  model: string;
  error?: string | null;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  costUsd?: number | null;
  entries: HistoryEntry[];
}

export type TurnStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'limited';

export interface ToolChip {
  name: string;
  summary: string;
}

export interface ChatTurn {
  id: string;
  question: string;
  /** The answer's Markdown so far. */
  answer: string;
  tools: ToolChip[];
  status: TurnStatus;
  costUsd?: number;
  tokens?: { input: number; cached: number; output: number };
  error?: string;
  model?: string;
}

export interface ChatState {
  turns: ChatTurn[];
  /** False once `mira/history` returned fewer turns than asked: nothing older exists. */
  moreBefore: boolean;
}

export type ServerEvent =
  | { method: 'mira/turnStarted'; params: { turn: string; question: string } }
  | { method: 'mira/delta'; params: { turn: string; text: string } }
  | { method: 'mira/toolCall'; params: { turn: string; name: string; summary: string } }
  | {
      method: 'mira/turnFinished';
      params: {
        turn: string;
        status: TurnStatus;
        usage: { inputTokens: number; cachedTokens: number; outputTokens: number };
        costUsd?: number | null;
        error?: string;
      };
    };

export function emptyState(): ChatState {
  return { turns: [], moreBefore: true };
}

export function fromHistory(t: HistoryTurn): ChatTurn {
  const text = (k: HistoryEntry['kind']) =>
    t.entries.filter((e) => e.kind === k).map((e) => e.text);
  return {
    id: t.turn,
    question: text('user').join('\n\n'),
    answer: text('assistant').join('\n\n'),
    tools: t.entries
      .filter((e) => e.kind === 'tool_call')
      .map((e) => ({ name: e.tool ?? 'tool', summary: e.text })),
    status: t.status,
    costUsd: t.costUsd ?? undefined,
    tokens: { input: t.inputTokens, cached: t.cachedTokens, output: t.outputTokens },
    error: t.error ?? undefined,
    model: t.model,
  };
}

/** Older turns (oldest first, as `mira/history` answers) go in front; known ids are skipped. */
export function prependHistory(s: ChatState, older: HistoryTurn[], asked: number): ChatState {
  const known = new Set(s.turns.map((t) => t.id));
  const fresh = older.filter((t) => !known.has(t.turn)).map(fromHistory);
  return { turns: [...fresh, ...s.turns], moreBefore: older.length >= asked };
}

/** The id to pass as `before` when the user scrolls back. */
export function oldestTurn(s: ChatState): string | undefined {
  return s.turns[0]?.id;
}

function update(s: ChatState, id: string, f: (t: ChatTurn) => ChatTurn): ChatState {
  let found = false;
  const turns = s.turns.map((t) => {
    if (t.id !== id) return t;
    found = true;
    return f(t);
  });
  if (!found) {
    // A delta for a turn this view has not seen start (it opened mid-turn): show it anyway.
    turns.push(f({ id, question: '', answer: '', tools: [], status: 'running' }));
  }
  return { ...s, turns };
}

export function applyEvent(s: ChatState, e: ServerEvent): ChatState {
  switch (e.method) {
    case 'mira/turnStarted':
      return update(s, e.params.turn, (t) => ({ ...t, question: e.params.question, status: 'running' }));
    case 'mira/delta':
      return update(s, e.params.turn, (t) => ({ ...t, answer: t.answer + e.params.text }));
    case 'mira/toolCall':
      return update(s, e.params.turn, (t) => ({
        ...t,
        tools: [...t.tools, { name: e.params.name, summary: e.params.summary }],
      }));
    case 'mira/turnFinished': {
      const p = e.params;
      return update(s, p.turn, (t) => ({
        ...t,
        status: p.status,
        costUsd: p.costUsd ?? undefined,
        tokens: { input: p.usage.inputTokens, cached: p.usage.cachedTokens, output: p.usage.outputTokens },
        error: p.error,
      }));
    }
  }
}

export function running(s: ChatState): ChatTurn | undefined {
  return [...s.turns].reverse().find((t) => t.status === 'running');
}

/** "$0.0042 · 1.2k in (1k cached) · 40 out" — what a turn cost. */
export function costLine(t: ChatTurn): string {
  const parts: string[] = [];
  if (t.costUsd !== undefined) parts.push(formatUsd(t.costUsd));
  if (t.tokens) {
    const cached = t.tokens.cached ? ` (${compact(t.tokens.cached)} cached)` : '';
    parts.push(`${compact(t.tokens.input)} in${cached}`, `${compact(t.tokens.output)} out`);
  }
  return parts.join(' · ');
}

export function formatUsd(v: number): string {
  if (v === 0) return '$0';
  return v < 0.01 ? `$${v.toFixed(4)}` : `$${v.toFixed(2)}`;
}

function compact(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1).replace(/\.0$/, '')}k` : String(n);
}
