// The chat page's HTML: a strict Content-Security-Policy (no inline script or style, scripts
// only with this load's nonce, everything else only from the extension's own files).

export interface PageAssets {
  cspSource: string;
  nonce: string;
  script: string;
  style: string;
}

export function csp(a: Pick<PageAssets, 'cspSource' | 'nonce'>): string {
  return [
    "default-src 'none'",
    `style-src ${a.cspSource}`,
    `script-src 'nonce-${a.nonce}'`,
    `img-src ${a.cspSource} data:`,
    `font-src ${a.cspSource}`,
  ].join('; ');
}

export function newNonce(random: () => number = Math.random): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < 32; i++) s += chars[Math.floor(random() * chars.length)];
  return s;
}

export function chatHtml(a: PageAssets): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp(a)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${a.style}">
<title>Mira</title>
</head>
<body>
<main id="log" aria-live="polite">
  <button id="older" class="older" hidden>Load older turns</button>
</main>
<div id="error" class="error" role="alert" hidden></div>
<form id="ask">
  <textarea id="question" rows="3" placeholder="Ask Mira… (Enter sends, Shift+Enter for a new line)" aria-label="Question"></textarea>
  <div class="row">
    <label class="context"><input type="checkbox" id="with-context" checked> <span id="context-label"></span></label>
    <button type="button" id="cancel" class="secondary" hidden>Cancel</button>
    <button type="submit" id="send">Send</button>
  </div>
</form>
<script nonce="${a.nonce}" src="${a.script}"></script>
</body>
</html>`;
}
