// Messages between the extension host and the chat page. One union each way, so both sides
// are type-checked against the same shapes.
import type { ChatTurn } from './state';

export type ToPage =
  /** The whole conversation as joined in the extension (a fresh load). */
  | { type: 'reset'; turns: ChatTurn[]; moreBefore: boolean }
  /** An older page, joined likewise. */
  | { type: 'older'; turns: ChatTurn[]; moreBefore: boolean }
  /** One turn as it is now (replaces the one with its id). */
  | { type: 'turn'; turn: ChatTurn }
  | { type: 'context'; label: string }
  | { type: 'error'; message: string };

export type FromPage =
  | { type: 'ready' }
  | { type: 'ask'; question: string; withContext: boolean }
  | { type: 'cancel'; turn?: string }
  | { type: 'loadOlder'; before: string }
  | { type: 'copy'; text: string }
  | { type: 'insert'; text: string };
