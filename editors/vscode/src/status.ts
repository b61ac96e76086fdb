// The status bar item's text, and today's cost kept across reloads (per calendar day).

export interface CostStore {
  get(key: string): unknown;
  update(key: string, value: unknown): Thenable<void> | Promise<void>;
}

const KEY = 'mira.costToday';

export function today(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

export function costToday(store: CostStore, now?: Date): number {
  const v = store.get(KEY) as { day?: string; usd?: number } | undefined;
  return v && v.day === today(now) && typeof v.usd === 'number' ? v.usd : 0;
}

export async function addCost(store: CostStore, usd: number, now?: Date): Promise<number> {
  const total = costToday(store, now) + usd;
  await store.update(KEY, { day: today(now), usd: total });
  return total;
}

export type ServerPhase = 'starting' | 'ready' | 'stopped';

export function statusText(phase: ServerPhase, answering: number, usd: number): { text: string; tooltip: string } {
  if (phase === 'stopped') return { text: '$(error) Mira', tooltip: 'Mira: the language server is not running. Click to open the chat; see "Mira: Show the server log".' };
  if (phase === 'starting') return { text: '$(loading~spin) Mira', tooltip: 'Mira: starting…' };
  if (answering > 0) return { text: '$(loading~spin) Mira: answering…', tooltip: 'Mira is answering. Click to open the chat.' };
  const cost = usd > 0 ? ` ${usd < 0.01 ? '$' + usd.toFixed(4) : '$' + usd.toFixed(2)}` : '';
  return { text: `$(comment-discussion) Mira${cost}`, tooltip: `Mira: idle${cost ? ` · spent${cost} today` : ''}. Click to open the chat.` };
}
