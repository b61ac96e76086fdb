// Messages between the extension host and the chat page. One union each way, so both sides
// are type-checked against the same shapes.
import type { HistoryTurn, ServerEvent } from './state';

export type ToPage =
  | { type: 'history'; turns: HistoryTurn[]; asked: number; reset: boolean }
  | { type: 'event'; event: ServerEvent }
  | { type: 'context'; label: string }
  | { type: 'error'; message: string };

export type FromPage =
  | { type: 'ready' }
  | { type: 'ask'; question: string; withContext: boolean }
  | { type: 'cancel'; turn?: string }
  | { type: 'loadOlder'; before: string }
  | { type: 'copy'; text: string }
  | { type: 'insert'; text: string };
