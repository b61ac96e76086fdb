// End to end in a real VS Code: code-server 4.99.4 + Debian Chromium, driven by playwright-core.
// Installs the packaged .vsix with `mira.path` only in User settings, reloads the window 20 times
// (every start must find the server, every stop must be clean, no Mira error in the extension
// host logs) and on every other start asks a question whose turn calls a tool, from the palette,
// so the chat view opens for the first time mid-turn (its history loading while the answer
// streams): the turn must show once, with one chip, at every moment, and read the same from
// history afterwards. Then shows the server log in the Mira channel and, with that channel
// focused, checks the model still gets lib.rs as context (never the output). It also
// types in lib.rs of its small project and accepts Mira's ghost
// text (inline completion through the chat mock) with Tab, runs "Ask Mira about `add`" from the
// lightbulb and watches the answer stream into the chat view (a loopback mock provider speaking
// Chat Completions SSE), accepts a model edit in the refactor preview and checks the file,
// forgets a memory from the memories view, saves a screenshot of the chat, and changes a
// mira.completion.* setting to see the server restart and completion use it.
// Every missing piece is a failure with the fix in the message: this test never skips.
//
// Env: MIRA_BIN (default: target/debug/mira of the repo), MIRA_CODE_SERVER_DIR (default
// ~/.cache/mira/code-server), MIRA_VSIX (default editors/vscode/mira.vsix), CHROMIUM,
// MIRA_E2E_STARTS (default 20; fewer only to try the later steps faster by hand).
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startMockProvider, lastMessage, fimPrompt, MODELS } from './mock-provider.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const extDir = path.resolve(here, '..');
const repo = path.resolve(extDir, '..', '..');
const artifacts = path.join(here, 'artifacts');
const started = Date.now();
const results = [];

function fail(message) {
  throw new Error(message);
}

const MIRA_BIN = path.resolve(repo, process.env.MIRA_BIN || 'target/debug/mira');
const CS_DIR = process.env.MIRA_CODE_SERVER_DIR || path.join(os.homedir(), '.cache', 'mira', 'code-server');
const CODE_SERVER = path.join(CS_DIR, 'node_modules', '.bin', 'code-server');
const VSIX = path.resolve(process.env.MIRA_VSIX || path.join(extDir, 'mira.vsix'));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
for (const [what, file, fix] of [
  ['the mira binary', MIRA_BIN, 'build it (cargo build) or set MIRA_BIN'],
  ['code-server', CODE_SERVER, 'run scripts/install-vscode-deps'],
  ['Chromium', CHROMIUM, 'run scripts/install-vscode-deps (apt chromium)'],
  ['the packaged extension', VSIX, 'run `npm run package` in editors/vscode'],
]) {
  if (!fs.existsSync(file)) {
    console.error(`e2e FAILED (not skipped): ${what} is missing at ${file}: ${fix}`);
    console.error('e2e: 0 passed, 1 failed');
    process.exit(1);
  }
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mira-vscode-e2e-'));
const project = path.join(tmp, 'project');
const miraHome = path.join(tmp, 'mira-home');
const userData = path.join(tmp, 'user-data');
const extensions = path.join(tmp, 'extensions');
fs.mkdirSync(path.join(project, 'src'), { recursive: true });
fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
fs.mkdirSync(artifacts, { recursive: true });
fs.writeFileSync(path.join(project, 'Cargo.toml'), '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n');
const LIB = [
  '/// Adds two numbers.',
  'pub fn add(a: i32, b: i32) -> i32 {',
  '    a + b',
  '}',
  '',
  'pub fn total(xs: &[i32]) -> i32 {',
  '    xs.iter().fold(0, |acc, x| add(acc, *x))',
  '}',
  '',
].join('\n');
fs.writeFileSync(path.join(project, 'src', 'lib.rs'), LIB);
fs.writeFileSync(path.join(project, 'notes.txt'), 'The secret word is PERIWINKLE.\n');

const ANSWER = ['`add` returns ', 'the sum of `a` and `b`. ', 'It is called by `total`, ', 'which folds a slice ', 'with it.\n\n', '```rust\nlet n = add(2, 3);\n```\n'];
const MEMORY = 'The calc project prefers wrapping arithmetic';
// Inline completion through the [provider] chat model (the mock) with a FIM prompt: the test's
// own user config file limits it to Rust, the `mira.completion.provider` setting turns it on
// (both layers reach the server, which reads [completion] when it starts).
const miraConfig = path.join(tmp, 'config.toml');
fs.writeFileSync(miraConfig, '[completion]\nlanguages = ["rust"]\n');
const GHOST_LINE = 'pub const ANSWER: i32 = ';
const GHOST = 'add(40, 2);';
const procs = [];
const env = {
  ...process.env,
  MIRA_HOME: miraHome,
  MIRA_CONFIG: miraConfig,
  OPENAI_API_KEY: 'sk-e2e-mock-key',
  // code-server's extension gallery, pointed at a closed loopback port: nothing leaves the machine.
  EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: 'http://127.0.0.1:9/gallery', itemUrl: 'http://127.0.0.1:9/items' }),
};

let current = 'setup';
function step(name) {
  current = name;
  const t = Date.now();
  console.log(`e2e: ${name}…`);
  return (ok = true) => {
    results.push({ name, ok, ms: Date.now() - t });
    console.log(`e2e: ${ok ? 'ok' : 'FAILED'} ${name} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  };
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function until(what, f, timeoutMs = 30_000, everyMs = 100) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      const v = await f();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  fail(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last ? ` (last error: ${last.message})` : ''}`);
}

/** Pids of the `mira lsp` processes this test's VS Code started (by their MIRA_HOME). */
function ourServers() {
  const pids = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const args = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (args[0] !== MIRA_BIN || args[1] !== 'lsp') continue;
      if (fs.readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(`MIRA_HOME=${miraHome}`)) pids.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** The question of the turn a request belongs to: its last user message, after the context
 * Mira puts before the question (`<context>…</context>`). */
function questionOf(body) {
  const user = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  const text = typeof user?.content === 'string' ? user.content : (user?.content ?? []).map((p) => p.text ?? '').join('');
  return text.split('</context>\n\n').at(-1);
}

let mock;
let browser;
let page;
let codeServer;
try {
  // The model, scripted by what it is asked.
  mock = await startMockProvider((body) => {
    // A completion request: suggest only where the test types, nothing elsewhere.
    const fim = fimPrompt(body);
    if (fim) return { text: fim.prefix.endsWith(GHOST_LINE) ? [GHOST] : [] };
    const last = lastMessage(body);
    // "What is the secret word? (start N)": look it up with read_file, then say it; each start
    // streams at its own pace so the chat view opens before, during or after the stream.
    const secret = /secret word\? \(start (\d+)\)/.exec(questionOf(body));
    if (secret) {
      const n = Number(secret[1]);
      // Many small deltas close together, so some land while the view's history request is in
      // flight; the first token comes sooner or later than the view opens.
      // The view opens about half a second to a second after the turn starts.
      const pace = { gapMs: [2, 5][(n / 2) % 2] };
      const words = 'The word is PERIWINKLE. It is written in notes.txt, on its first and only line, which Mira read just now.';
      if (last.role === 'tool') return { ...pace, text: words.match(/.{1,2}/gs) };
      const first = 'Let me look. The word you want is kept in a file of this project, so I will read it first.';
      return { ...pace, delayMs: [0, 200, 400, 600, 800][(n / 2) % 5], text: first.match(/.{1,2}/gs), calls: [[`call_notes_${n}`, 'read_file', JSON.stringify({ path: 'notes.txt' })]] };
    }
    if (last.role === 'tool') return { text: ['Done: `add` now wraps on overflow.'] };
    if (questionOf(body).includes('take your time')) return { text: Array.from({ length: 40 }, (_, i) => `part ${i}. `) };
    if (last.role === 'user' && questionOf(body).includes('wrap on overflow')) {
      return { calls: [['call_edit_1', 'edit_file', JSON.stringify({ path: 'src/lib.rs', old_string: '    a + b\n', new_string: '    a.wrapping_add(b)\n' })]] };
    }
    return { text: ANSWER };
  }, { gapMs: 150 });

  let done = step('seed a memory, a goal and tasks with the CLI');
  execFileSync(MIRA_BIN, ['remember', MEMORY], { env, cwd: project, stdio: 'pipe' });
  execFileSync(MIRA_BIN, ['goals', 'add', 'Ship calc 1.0'], { env, cwd: project, stdio: 'pipe' });
  execFileSync(MIRA_BIN, ['tasks', 'add', 'Write the changelog', '--goal', '1'], { env, cwd: project, stdio: 'pipe' });
  execFileSync(MIRA_BIN, ['tasks', 'add', 'Rotate the staging keys'], { env, cwd: project, stdio: 'pipe' });
  done();

  done = step('install the .vsix into code-server');
  const csArgs = ['--extensions-dir', extensions, '--user-data-dir', userData];
  const installed = execFileSync(CODE_SERVER, [...csArgs, '--install-extension', VSIX], { env, encoding: 'utf8' });
  if (!/successfully installed/i.test(installed)) fail(`install said: ${installed}`);
  done();

  // `mira.path` only in User settings (window-scoped, so a remote window such as code-server
  // reads it there too): every start below must find it.
  fs.writeFileSync(
    path.join(userData, 'User', 'settings.json'),
    JSON.stringify(
      {
        'mira.path': MIRA_BIN,
        'mira.provider': 'openai-chat',
        'mira.model': 'gpt-4.1',
        'mira.baseUrl': mock.url,
        'mira.completion.provider': 'chat',
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'workbench.enableExperiments': false,
        'security.workspace.trust.enabled': false,
        'telemetry.telemetryLevel': 'off',
        'extensions.autoUpdate': false,
        'extensions.autoCheckUpdates': false,
        'update.mode': 'none',
        'editor.lightbulb.enabled': 'on',
        'files.autoSave': 'off',
        'chat.commandCenter.enabled': false,
      },
      null,
      2,
    ),
  );

  done = step('start code-server');
  const port = await freePort();
  const log = fs.openSync(path.join(artifacts, 'code-server.log'), 'w');
  codeServer = spawn(CODE_SERVER, [...csArgs, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', project], { env, stdio: ['ignore', log, log], detached: true });
  procs.push(codeServer);
  await until('code-server to answer', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60_000, 250);
  done();

  done = step('open the project in Chromium');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
      // Every host name but loopback fails to resolve: the page reaches nothing off this machine.
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(project)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  await page.waitForSelector('.statusbar-item[id$="mira"], .statusbar-item:has-text("Mira")', { timeout: 60_000 });
  // Open src/lib.rs through Quick Open.
  await page.keyboard.press('Control+P');
  await page.waitForSelector('.quick-input-widget .quick-input-box input', { timeout: 15_000 });
  await page.keyboard.type('lib.rs');
  await page.waitForSelector('.quick-input-list .monaco-list-row', { timeout: 15_000 });
  await page.keyboard.press('Enter');
  const editor = page.locator('.editor-instance .monaco-editor').first();
  await until('src/lib.rs in the editor', async () => (await editor.locator('.view-lines').innerText()).replace(/\u00a0/g, ' ').includes('pub fn add'));
  done();

  // Runs a palette command; `row` is the entry's text when it differs from what is typed.
  // Retried while the entry is missing (Mira's commands exist only once its server runs).
  const palette = async (typed, row = typed, timeoutMs = 20_000) => {
    await until(`"${row}" in the command palette`, async () => {
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+Shift+P');
      await page.waitForSelector('.quick-input-widget .quick-input-box input', { timeout: 5_000 });
      await page.keyboard.type(typed);
      const entry = page.locator('.quick-input-list .monaco-list-row', { hasText: row }).first();
      await entry.waitFor({ state: 'visible', timeout: 2_000 });
      await entry.click();
      return true;
    }, timeoutMs, 250);
  };
  /** The chat page (a frame still attached), once the view has been opened. */
  const liveChatFrame = () =>
    until('the chat view', async () => {
      for (const f of page.frames().reverse()) {
        if (f.isDetached()) continue;
        if ((await f.locator('#log').count().catch(() => 0)) > 0) return f;
      }
    }, 30_000, 100);
  const toastText = async () => (await page.locator('.notifications-toasts').allInnerTexts().catch(() => [])).join('\n');
  // Starts in a row (MIRA_E2E_STARTS only to try the rest of the test faster by hand).
  const STARTS = Number(process.env.MIRA_E2E_STARTS || 20);
  const serverLog = () => {
    const dir = path.join(miraHome, 'logs');
    return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.startsWith('mira.log.')).map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('') : '';
  };

  done = step(`${STARTS} starts in a row with mira.path only in User settings; the chat view opened for the first time mid-turn shows the turn once`);
  const editorArea = page.locator('.editor-instance .monaco-editor .view-lines').first();
  let turnsAsked = 0;
  const t0 = Date.now();
  for (let i = 0; i < STARTS; i++) {
    // The chat view out of sight, so this extension host first opens it when a turn starts.
    await page.keyboard.press('Escape');
    await editorArea.click();
    await page.keyboard.press('Control+Shift+E');
    const before = ourServers();
    const loaded = page.waitForEvent('load', { timeout: 30_000 });
    await palette('Developer: Reload Window', 'Developer: Reload Window');
    await loaded;
    await page.waitForSelector('.monaco-workbench', { timeout: 30_000 });
    await until(`start ${i + 1}: a new server, the old one gone`, async () => {
      const now = ourServers();
      return now.length === 1 && !before.includes(now[0]);
    }, 30_000, 100);
    if (/not found on PATH|not an executable|stopped unexpectedly/.test(await toastText())) fail(`start ${i + 1}: ${await toastText()}`);
    if (i % 2 === 1) continue;
    // Every other start: a turn with a tool call, asked from the palette (the chat view not
    // open), streaming at this start's pace; the view opens itself when the turn starts and
    // loads the history while the turn runs.
    const question = `What is the secret word? (start ${i})`;
    await palette('Mira: Ask', 'Mira: Ask…');
    await page.locator('.quick-input-widget', { hasText: 'Ask Mira' }).first().waitFor({ state: 'visible', timeout: 10_000 });
    await page.keyboard.type(question);
    await page.keyboard.press('Enter');
    turnsAsked++;
    let chat = await liveChatFrame();
    if (i % 6 === 4) {
      // The view's page is made again while the turn runs (and maybe while its first history
      // request is in flight): the new page loads the history again.
      const first = chat;
      await palette('Developer: Reload Webviews', 'Reload Webviews');
      await until('the chat page made again', async () => first.isDetached(), 10_000, 50);
      chat = await liveChatFrame();
    }
    // Watch the turn as it renders: no moment may show an entry twice.
    await chat.evaluate((q) => {
      const w = window;
      w.__worst = { chips: 0, words: 0, looks: 0 };
      const look = () => {
        for (const t of document.querySelectorAll('.turn')) {
          if (t.querySelector('.question')?.textContent !== q) continue;
          const a = t.querySelector('.answer')?.textContent ?? '';
          w.__worst.chips = Math.max(w.__worst.chips, t.querySelectorAll('.chip').length);
          w.__worst.words = Math.max(w.__worst.words, (a.match(/PERIWINKLE/g) ?? []).length);
          w.__worst.looks = Math.max(w.__worst.looks, (a.match(/Let me look/g) ?? []).length);
        }
      };
      look();
      new MutationObserver(look).observe(document.getElementById('log'), { subtree: true, childList: true, characterData: true });
    }, question);
    const turn = chat.locator('.turn', { has: chat.locator('.question', { hasText: question }) });
    await until(`start ${i + 1}: the answer in the chat view`, async () => (await chat.locator('.turn.status-completed .question', { hasText: question }).count()) > 0, 30_000, 100);
    const shown = await turn.count();
    const chips = await turn.first().locator('.chip').allInnerTexts();
    const answer = await turn.first().locator('.answer').innerText();
    const worst = await chat.evaluate(() => window.__worst);
    if (shown !== 1) fail(`start ${i + 1}: the turn is shown ${shown} times`);
    if (chips.length !== 1 || chips[0] !== 'read notes.txt') fail(`start ${i + 1}: tool chips ${JSON.stringify(chips)} for one read_file call`);
    if ((answer.match(/PERIWINKLE/g) ?? []).length !== 1 || (answer.match(/Let me look/g) ?? []).length !== 1) fail(`start ${i + 1}: the answer shows twice: ${JSON.stringify(answer)}`);
    if (worst.chips > 1 || worst.words > 1 || worst.looks > 1) fail(`start ${i + 1}: while streaming an entry showed twice: ${JSON.stringify(worst)}`);
  }
  console.log(`e2e: ${STARTS} starts (${turnsAsked} with a turn opening the chat view) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  // No tab showed the transcript, so the server wrote it and sent it no edit: no unsaved copy
  // of it for a reload to restore (that copy's next save failed, "the content of the file is
  // newer").
  if (await page.locator('.tab', { hasText: 'conversation.md' }).count()) fail('a conversation.md tab appeared during the starts (an unsaved copy restored by a reload)');
  const lastAsked = `secret word? (start ${STARTS - 1 - ((STARTS - 1) % 2)})`;
  await until('the last turn in conversation.md on disk', async () => fs.readFileSync(path.join(miraHome, 'conversation.md'), 'utf8').includes(lastAsked), 10_000, 100)
    .catch(() => fail(`conversation.md on disk lacks "${lastAsked}"`));
  // Every server of those starts was stopped with shutdown and exit.
  await until('the last stop logged', async () => (serverLog().match(/language server stopped clean=/g) ?? []).length >= STARTS, 10_000, 200);
  const unclean = (serverLog().match(/language server stopped clean=false/g) ?? []).length;
  if (unclean) fail(`${unclean} of the servers stopped without shutdown/exit ("language server stopped clean=false" in ${path.join(miraHome, 'logs')})`);
  // Nor did any stop make Mira fail a request or write to a closed channel (the extension
  // hosts' logs: "[mira.mira] provider FAILED", "Channel has been closed" from Mira's code).
  const hostLogs = [];
  const walkLogs = (d) => { for (const f of fs.readdirSync(d, { withFileTypes: true })) f.isDirectory() ? walkLogs(path.join(d, f.name)) : /exthost\.log$/i.test(f.name) && hostLogs.push(path.join(d, f.name)); };
  walkLogs(path.join(userData, 'logs'));
  const miraErrors = hostLogs
    .flatMap((f) => fs.readFileSync(f, 'utf8').split(/\n(?=\d{4}-\d\d-\d\d )/))
    .filter((entry) => /\[error\]/.test(entry) && /\[mira\.mira\]|extensions\/mira\.mira-/.test(entry));
  if (miraErrors.length) fail(`Mira's errors in the extension host logs while starting and stopping:\n${miraErrors.slice(0, 3).join('\n').slice(0, 3000)}`);
  console.log(`e2e: ${hostLogs.length} extension host logs, no error from Mira`);
  // How the races went: the chat view says when its history came while a turn ran.
  const joins = [];
  const walkChannels = (d) => { for (const f of fs.readdirSync(d, { withFileTypes: true })) f.isDirectory() ? walkChannels(path.join(d, f.name)) : f.name === 'Mira.log' && joins.push(...fs.readFileSync(path.join(d, f.name), 'utf8').split('\n').filter((l) => l.includes('chat: history loaded with'))); };
  walkChannels(path.join(userData, 'logs'));
  const during = joins.filter((l) => !/; 0 live event/.test(l)).length;
  const midTurn = joins.filter((l) => !/with 0 running/.test(l)).length;
  console.log(`e2e: the chat view loaded its history with the turn still running ${midTurn} time(s), with live events arriving during the request ${during} time(s)`);
  done();

  done = step('a tool call reads the same from history as it did live');
  await palette('Mira: Open chat');
  const reopened = await liveChatFrame();
  await until('the earlier turns from history', async () => (await reopened.locator('.turn .question', { hasText: 'secret word? (start 0)' }).count()) > 0, 20_000, 100);
  const historyChips = await reopened.locator('.turn .chip').allInnerTexts();
  if (historyChips.length !== turnsAsked || historyChips.some((c) => c !== 'read notes.txt')) fail(`chips from history: ${JSON.stringify(historyChips)}`);
  if (/see conversation\.md/.test(await toastText())) fail('a toast points to conversation.md for an answer the chat view shows');
  done();

  done = step('ghost text (inline completion) as you type, accepted with Tab');
  const GHOST_CSS = '.ghost-text-decoration, .ghost-text-decoration-preview, .ghost-text';
  // The document's text as shown, without the ghost text Monaco renders inside the line.
  const editorText = async () => (await editor.locator('.view-lines').evaluate((el, css) => {
    const copy = el.cloneNode(true);
    for (const n of copy.querySelectorAll(css)) n.remove();
    return copy.textContent;
  }, GHOST_CSS)).replace(/\u00a0/g, ' ');
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+G');
  await page.waitForSelector('.quick-input-widget .quick-input-box input');
  await page.keyboard.type('5:1');
  await page.keyboard.press('Enter');
  await page.keyboard.insertText(GHOST_LINE.trimEnd());
  await page.keyboard.type(' ');
  // Monaco renders ghost text as spans of .ghost-text-decoration (one per highlighted token).
  const ghost = editor.locator(GHOST_CSS);
  const ghostText = async () => (await ghost.allTextContents()).join('').replace(/\u00a0/g, ' ');
  await until('VS Code to show the ghost text', async () => (await ghostText()).includes(GHOST), 20_000, 100)
    .catch((e) => fail(`the ghost text "${GHOST}" never showed after typing "${GHOST_LINE}": ${e.message}`));
  if ((await editorText()).includes(GHOST_LINE + GHOST)) fail('the suggestion was inserted before it was accepted');
  await page.screenshot({ path: path.join(artifacts, 'ghost-text.png') });
  await page.keyboard.press('Tab');
  await until('the accepted suggestion in the editor', async () => (await editorText()).includes(GHOST_LINE + GHOST), 10_000);
  if ((await ghostText()).includes(GHOST)) fail('the ghost text stayed after Tab');
  const fimReq = mock.requests.map((r) => fimPrompt(r.body)).find((f) => f && f.prefix.endsWith(GHOST_LINE));
  if (!fimReq) fail('the completion request did not carry the typed prefix');
  if (!fimReq.prefix.includes('pub fn add(a: i32, b: i32) -> i32 {')) fail(`the prefix lacks the code above the cursor: ${JSON.stringify(fimReq.prefix)}`);
  if (!fimReq.suffix.startsWith('\npub fn total(xs: &[i32]) -> i32 {')) fail(`the suffix is not the code after the cursor: ${JSON.stringify(fimReq.suffix)}`);
  await page.keyboard.press('Control+S');
  await until('the completed line saved to disk', async () => fs.readFileSync(path.join(project, 'src', 'lib.rs'), 'utf8').includes(GHOST_LINE + GHOST), 10_000);
  console.log(`e2e: ${mock.requests.filter((r) => fimPrompt(r.body)).length} completion request(s) reached the model`);
  done();

  done = step('"Ask Mira about `add`" from the lightbulb');
  // Open the chat from the palette and record every rendering of the newest answer, so the
  // test sees the answer grow (streamed) rather than arrive whole.
  await page.keyboard.press('Control+Shift+P');
  await page.waitForSelector('.quick-input-widget .quick-input-box input');
  await page.keyboard.type('Mira: Open chat');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Mira: Open chat' }).first().click();
  const frame = await liveChatFrame();
  await frame.evaluate(() => {
    const w = window;
    w.__renderings = [];
    new MutationObserver(() => {
      const answers = document.querySelectorAll('.turn .answer');
      const last = answers[answers.length - 1];
      if (last && w.__renderings[w.__renderings.length - 1] !== last.textContent) w.__renderings.push(last.textContent);
    }).observe(document.getElementById('log'), { subtree: true, childList: true, characterData: true });
  });
  // Cursor on `add` in its definition (line 2, column 8), then the lightbulb's menu.
  let action;
  await until('the lightbulb with "Ask Mira about `add`"', async () => {
    await page.keyboard.press('Escape');
    await editor.locator('.view-lines').click();
    await page.keyboard.press('Control+G');
    await page.waitForSelector('.quick-input-widget .quick-input-box input');
    await page.keyboard.type('2:9');
    await page.keyboard.press('Enter');
    const bulb = page.locator('.lightBulbWidget').first();
    await bulb.waitFor({ state: 'visible', timeout: 4_000 });
    await bulb.click();
    action = page.locator('.action-widget .monaco-list-row', { hasText: 'Ask Mira about `add`' }).first();
    await action.waitFor({ state: 'visible', timeout: 3_000 });
    return true;
  }, 60_000, 500);
  // The action widget lays a pointer block over the page until the mouse moves: move, then click.
  const box = await action.boundingBox();
  await page.mouse.move(box.x + 10, box.y + box.height / 2);
  await page.mouse.move(box.x + 20, box.y + box.height / 2, { steps: 3 });
  await page.mouse.click(box.x + 20, box.y + box.height / 2);
  await until('the streamed answer in the chat view', async () => {
    const answers = frame.locator('.turn .answer');
    const n = await answers.count();
    if (!n) return false;
    const text = await answers.nth(n - 1).innerText();
    return text.includes('which folds a slice with it') && /status-completed/.test((await frame.locator('.turn').last().getAttribute('class')) ?? '');
  }, 45_000, 100);
  const renderings = await frame.evaluate(() => window.__renderings);
  const partial = renderings.filter((t) => t && !t.includes('which folds a slice with it'));
  if (partial.length < 2) fail(`the answer was not seen streaming (partial renderings: ${JSON.stringify(partial)})`);
  console.log(`e2e: the answer rendered ${renderings.length} times while streaming`);
  const askReq = mock.requests.find((r) => !fimPrompt(r.body) && JSON.stringify(r.body).includes('pub fn add'));
  if (!askReq) fail('the model request did not carry the definition of `add`');
  if (!(await frame.locator('pre.code .hljs-keyword', { hasText: 'let' }).count())) fail('the code block was not highlighted');
  if (!(await frame.locator('.meta .cost').last().innerText()).includes('in')) fail('the turn shows no cost line');
  await page.screenshot({ path: path.join(artifacts, 'chat.png') });
  done();

  done = step('"Mira: Show the server log" shows today\'s server log; with the output focused, the context is still lib.rs');
  await palette('Mira: Show the server log');
  const outputLines = page.locator('.part.panel .monaco-editor .view-lines').first();
  const shownOutput = async () => (await outputLines.innerText()).replace(/\u00a0/g, ' ');
  await until('server log lines in the Mira output channel', async () => /\[server \d{4}-\d\d-\d\dT[^\]]*\] (mira|tower_lsp)/.test(await shownOutput()), 15_000, 200)
    .catch(async (e) => fail(`${e.message}; the panel shows: ${(await outputLines.innerText().catch(() => '')).slice(-500)}`));
  // Click into the channel's text: the output channel is now the active editor.
  const focusOutput = async () => {
    const box = await outputLines.boundingBox();
    await page.mouse.click(box.x + Math.min(300, box.width / 2), box.y + Math.min(40, box.height / 2));
  };
  await focusOutput();
  await new Promise((r) => setTimeout(r, 500));
  const label = await frame.locator('#context-label').innerText();
  if (!/^with lib\.rs:\d+/.test(label)) fail(`with the Mira output focused, the chat's context reads "${label}"`);
  const noOutput = (what) => {
    const req = mock.requests.find((r) => questionOf(r.body).includes(what));
    if (!req) fail(`"${what}" never reached the model`);
    const body = JSON.stringify(req.body);
    if (/\[server \d{4}-|extension-output|"output:|mira::lsp/.test(body)) fail(`the output channel reached the prompt of "${what}"`);
    if (!body.includes('lib.rs')) fail(`the prompt of "${what}" lacks the file the user was in`);
  };
  // From the palette while the output channel is the active editor…
  await palette('Mira: Ask', 'Mira: Ask…');
  await page.locator('.quick-input-widget', { hasText: 'Ask Mira' }).first().waitFor({ state: 'visible', timeout: 10_000 });
  await page.keyboard.type('Where am I? (palette context check)');
  await page.keyboard.press('Enter');
  await until('the palette question answered', async () => (await frame.locator('.turn.status-completed .question', { hasText: 'palette context check' }).count()) > 0, 30_000, 100);
  noOutput('palette context check');
  // …and from the chat, with its context box ticked.
  await focusOutput();
  await frame.locator('#question').fill('Where am I? (chat context check)');
  await frame.locator('#send').click();
  await until('the chat question answered', async () => (await frame.locator('.turn.status-completed .question', { hasText: 'chat context check' }).count()) > 0, 30_000, 100);
  noOutput('chat context check');
  // "Mira answered … — see conversation.md" is for editors without a chat: the server sends it
  // to no client with Mira's notifications, and VS Code shows the answer in the chat only.
  if (/see conversation\.md/.test(await toastText())) fail(`a toast points to conversation.md: ${await toastText()}`);
  const channelFiles = [];
  const walk = (d) => { for (const f of fs.readdirSync(d, { withFileTypes: true })) f.isDirectory() ? walk(path.join(d, f.name)) : f.name === 'Mira.log' && channelFiles.push(path.join(d, f.name)); };
  walk(path.join(userData, 'logs'));
  const channel = channelFiles.map((f) => fs.readFileSync(f, 'utf8')).join('');
  if (/\[showMessage\] Mira answered/.test(channel)) fail('the server sent "Mira answered" to a client whose chat view shows the answers');
  await palette('View: Hide Panel');
  await editor.locator('.view-lines').click();
  done();

  done = step('a changed setting reaches the server (didChangeConfiguration); Cancel stops a turn');
  // As a user would: edit settings.json in VS Code and save it.
  const settingsFile = path.join(userData, 'User', 'settings.json');
  const changeSettings = async (changes) => {
    const newSettings = JSON.stringify({ ...JSON.parse(fs.readFileSync(settingsFile, 'utf8')), ...changes });
    await page.keyboard.press('Control+Shift+P');
    await page.waitForSelector('.quick-input-widget .quick-input-box input');
    await page.keyboard.type('Preferences: Open User Settings (JSON)');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open User Settings (JSON)' }).first().click();
    await page.locator('.tab', { hasText: 'settings.json' }).first().waitFor({ state: 'visible', timeout: 15_000 });
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(newSettings);
    await page.keyboard.press('Control+S');
    await until('settings.json saved', async () => fs.readFileSync(settingsFile, 'utf8') === newSettings, 10_000);
    const settingsTab = page.locator('.tab', { hasText: 'settings.json' }).first();
    await until('settings.json saved in the editor', async () => !/\bdirty\b/.test((await settingsTab.getAttribute('class')) ?? ''), 10_000);
    await page.keyboard.press('Control+W');
    await page.locator('.tab', { hasText: 'lib.rs' }).first().click();
  };
  await changeSettings({ 'mira.model': 'gpt-4.1-mini' });
  // VS Code reads the saved file and tells extensions a moment later; the extension then sends
  // workspace/didChangeConfiguration. Nothing observable marks that moment from outside.
  await new Promise((r) => setTimeout(r, 2_000));
  const asked = mock.requests.length;
  await frame.locator('#question').fill('Explain the crate, take your time');
  await frame.locator('#question').press('Enter');
  await until('the slow answer to start', async () => (await frame.locator('.turn .answer', { hasText: 'part 1.' }).count()) > 0, 30_000);
  await frame.locator('.turn.status-running .turn-cancel').click();
  await until('the turn to show it was cancelled', async () => (await frame.locator('.turn.status-cancelled').count()) > 0, 15_000);
  const slow = mock.requests.slice(asked).find((r) => lastMessage(r.body).text.includes('take your time'));
  if (!slow) fail('the slow question never reached the model');
  if (slow.body.model !== 'gpt-4.1-mini') fail(`the new mira.model setting did not reach the server: it asked for ${slow.body.model}`);
  done();

  done = step('"Mira: Choose Model" lists the server\'s models (the one in use marked) and writes the pick to mira.model, which the server then uses');
  await palette('Mira: Choose Model');
  const modelPick = page.locator('.quick-input-widget', { hasText: 'Choose Model' }).first();
  await modelPick.waitFor({ state: 'visible', timeout: 15_000 }).catch(() => fail('no model QuickPick appeared'));
  const modelRows = page.locator('.quick-input-list .monaco-list-row');
  await until('the server\'s models in the QuickPick', async () => (await modelRows.count()) === MODELS.length, 10_000, 100)
    .catch(async () => fail(`the QuickPick lists ${JSON.stringify(await modelRows.allInnerTexts())}, not ${MODELS}`));
  const rowsText = (await modelRows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
  for (const m of MODELS) if (!rowsText.some((t) => t.startsWith(m))) fail(`${m} is not offered: ${JSON.stringify(rowsText)}`);
  if (!/^gpt-4\.1-mini\b.*in use/.test(rowsText[0])) fail(`the model in use (gpt-4.1-mini) is not first and marked: ${JSON.stringify(rowsText)}`);
  if (rowsText.filter((t) => /in use/.test(t)).length !== 1) fail(`not exactly one model marked in use: ${JSON.stringify(rowsText)}`);
  await page.keyboard.type('local-e2e-model');
  await page.keyboard.press('Enter');
  await until('mira.model written to User settings', async () => JSON.parse(fs.readFileSync(settingsFile, 'utf8'))['mira.model'] === 'local-e2e-model', 10_000, 100)
    .catch(() => fail(`settings.json has mira.model ${JSON.parse(fs.readFileSync(settingsFile, 'utf8'))['mira.model']}, not local-e2e-model`));
  await new Promise((r) => setTimeout(r, 2_000));
  await frame.locator('#question').fill('Which model answers? (model choice check)');
  await frame.locator('#question').press('Enter');
  await until('the model-choice question answered', async () => (await frame.locator('.turn.status-completed .question', { hasText: 'model choice check' }).count()) > 0, 30_000, 100);
  const chosen = mock.requests.find((r) => lastMessage(r.body).text.includes('model choice check'));
  if (chosen?.body.model !== 'local-e2e-model') fail(`the chosen model did not reach the server: it asked for ${chosen?.body.model}`);
  await changeSettings({ 'mira.model': 'gpt-4.1' });
  done();

  done = step('accept a model edit in the refactor preview');
  await frame.locator('#question').fill('Make add wrap on overflow');
  await frame.locator('#question').press('Enter');
  // VS Code's refactor preview lists edits that need confirmation unticked: tick the file, Apply.
  const previewRow = page.locator('[aria-label="Bulk Edit"] .monaco-list-row', { hasText: 'lib.rs' }).first();
  await previewRow.waitFor({ state: 'visible', timeout: 45_000 }).catch(() => fail('the refactor preview with the edit to lib.rs did not appear'));
  const apply = page.locator('.monaco-button', { hasText: /^Apply$/ }).first();
  if ((await editor.locator('.view-lines').innerText()).includes('wrapping_add')) fail('the edit applied before it was confirmed');
  await previewRow.locator('input[type="checkbox"], .monaco-custom-toggle').first().click();
  await apply.click();
  await until('the edit in the editor', async () => (await editor.locator('.view-lines').innerText()).replace(/\u00a0/g, ' ').includes('a.wrapping_add(b)'), 20_000);
  await until('the turn to finish', async () => (await frame.locator('.turn .answer', { hasText: 'now wraps on overflow' }).count()) > 0, 30_000);
  const toolResult = mock.requests.map((r) => r.body.messages.at(-1)).find((m) => m.role === 'tool' && m.tool_call_id === 'call_edit_1');
  if (!toolResult || !/appl/i.test(JSON.stringify(toolResult.content))) fail(`the model was not told the edit applied: ${JSON.stringify(toolResult)}`);
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+S');
  await until('the edit saved to disk', async () => fs.readFileSync(path.join(project, 'src', 'lib.rs'), 'utf8').includes('a.wrapping_add(b)'), 10_000);
  done();

  done = step('the transcript streams without leaving its tab dirty');
  await page.keyboard.press('Control+Shift+P');
  await page.waitForSelector('.quick-input-widget .quick-input-box input');
  await page.keyboard.type('Mira: Open the conversation transcript');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open the conversation transcript' }).first().click();
  const transcriptTab = page.locator('.tab', { hasText: 'conversation.md' }).first();
  await transcriptTab.waitFor({ state: 'visible', timeout: 15_000 }).catch(() => fail('the transcript did not open'));
  // Opening the transcript moves the keyboard focus into its editor a moment later, so a key
  // pressed in the chat could land in conversation.md: send with the button, by mouse.
  await until('the transcript editor active', async () => /\bactive\b/.test((await transcriptTab.getAttribute('class')) ?? ''), 10_000, 100);
  await frame.locator('#question').fill('What does total return?');
  await frame.locator('#send').click();
  await until('the question sent', async () => (await frame.locator('#question').inputValue()) === '', 10_000, 100)
    .catch(() => fail('the question stayed in the chat input'));
  let sawDirty = false;
  await until('the answer in the open transcript', async () => {
    if (/\bdirty\b/.test((await transcriptTab.getAttribute('class')) ?? '')) sawDirty = true;
    return (await frame.locator('.turn.status-completed', { hasText: 'What does total return?' }).count()) > 0;
  }, 45_000, 100);
  await until('the transcript tab clean', async () => !/\bdirty\b/.test((await transcriptTab.getAttribute('class')) ?? ''), 5_000, 100)
    .catch(async () => {
      // What VS Code said (a failed save shows a toast) goes in the failure, for CI's log.
      const toasts = (await page.locator('.notifications-toasts').allInnerTexts().catch(() => [])).join(' | ');
      fail(`the transcript tab stayed dirty after the turn (notifications: ${toasts || 'none'})`);
    });
  if (!fs.readFileSync(path.join(miraHome, 'conversation.md'), 'utf8').includes('What does total return?')) fail('the saved transcript lacks the last question');
  console.log(`e2e: the transcript tab was ${sawDirty ? 'briefly dirty while streaming, then saved' : 'never dirty'}`);
  await transcriptTab.click();
  await page.keyboard.press('Control+W');
  await page.locator('.tab', { hasText: 'lib.rs' }).first().click();
  done();

  done = step('goals and tasks in the memories view');
  const memoriesHeader = page.locator('.pane-header', { hasText: 'Memories' }).first();
  await memoriesHeader.waitFor({ state: 'visible', timeout: 15_000 });
  if ((await memoriesHeader.getAttribute('aria-expanded')) === 'false') await memoriesHeader.click();
  for (const label of ['Ship calc 1.0', 'Write the changelog', 'Tasks', 'Rotate the staging keys', MEMORY]) {
    await page.locator('.monaco-list-row', { hasText: label }).first().waitFor({ state: 'visible', timeout: 15_000 })
      .catch(() => fail(`"${label}" is not in the memories view`));
    // After 20 starts and the refreshes of every turn, each is listed once.
    const rows = await page.locator('.monaco-list-row', { hasText: label }).count();
    if (rows !== 1 && label !== 'Tasks') fail(`"${label}" is listed ${rows} times in the memories view`);
  }
  done();

  done = step('forget a memory from the memories view');
  const row = page.locator('.monaco-list-row', { hasText: MEMORY }).first();
  await row.waitFor({ state: 'visible', timeout: 20_000 }).catch(() => fail('the seeded memory is not in the memories view'));
  // Right-click → Forget; a click the menu swallowed (it sometimes takes the first as focus)
  // is tried again while the memory is still listed as active.
  const forgottenGroup = page.locator('.monaco-list-row', { hasText: 'Forgotten (restorable)' }).first();
  await until('the memory to move to "Forgotten (restorable)"', async () => {
    if (await forgottenGroup.isVisible()) return true;
    if (!(await row.isVisible())) return false;
    await row.click({ button: 'right' });
    const forget = page.locator('.context-view .action-menu-item', { hasText: /^Forget$/ }).first();
    await forget.waitFor({ state: 'visible', timeout: 5_000 });
    await forget.hover();
    await forget.click();
    if (await forget.isVisible().catch(() => false)) await page.keyboard.press('Enter');
    await forgottenGroup.waitFor({ state: 'visible', timeout: 4_000 }).catch(() => {});
    return forgottenGroup.isVisible();
  }, 30_000, 500);
  const listed = execFileSync(MIRA_BIN, ['memories'], { env, cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (listed.includes(MEMORY)) fail(`\`mira memories\` still lists the forgotten memory:\n${listed}`);
  done();

  done = step('"Mira: Remember…" from the command palette lands in the memories view');
  await page.keyboard.press('Control+Shift+P');
  await page.waitForSelector('.quick-input-widget .quick-input-box input');
  await page.keyboard.type('Mira: Remember');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Mira: Remember…' }).first().click();
  await page.locator('.quick-input-widget', { hasText: 'what should I remember' }).first().waitFor({ state: 'visible', timeout: 10_000 });
  await page.keyboard.type('Release builds use thin LTO');
  await page.keyboard.press('Enter');
  await page.locator('.monaco-list-row', { hasText: 'Release builds use thin LTO' }).first().waitFor({ state: 'visible', timeout: 15_000 })
    .catch(() => fail('the remembered text did not appear in the memories view'));
  if (!execFileSync(MIRA_BIN, ['memories'], { env, cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).includes('Release builds use thin LTO')) fail('`mira memories` does not list it');
  done();

  done = step('the server restarts after a crash, with a message');
  const before = ourServers();
  if (before.length !== 1) fail(`expected one mira lsp of this test running, found ${before.length}`);
  process.kill(before[0], 'SIGKILL');
  await page.locator('.notifications-toasts', { hasText: 'stopped unexpectedly; restarting' }).first().waitFor({ state: 'visible', timeout: 20_000 })
    .catch(() => fail('no message said the server stopped and restarts'));
  await until('a new server process', async () => {
    const now = ourServers();
    return now.length === 1 && now[0] !== before[0];
  }, 20_000, 250);
  done();

  done = step('a memory forgotten before the restart is restored from the memories view');
  await page.locator('.monaco-list-row', { hasText: 'Forgotten (restorable)' }).first().waitFor({ state: 'visible', timeout: 15_000 })
    .catch(() => fail('the new server does not list the forgotten memory'));
  const forgottenRow = page.locator('.monaco-list-row', { hasText: MEMORY }).first();
  await until('the memory restored', async () => {
    if (execFileSync(MIRA_BIN, ['memories'], { env, cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).includes(MEMORY)) return true;
    if (!(await forgottenRow.isVisible())) return false;
    await forgottenRow.click({ button: 'right' });
    const restore = page.locator('.context-view .action-menu-item', { hasText: /^Restore$/ }).first();
    await restore.waitFor({ state: 'visible', timeout: 5_000 });
    await restore.hover();
    await restore.click();
    if (await restore.isVisible().catch(() => false)) await page.keyboard.press('Enter');
    await new Promise((r) => setTimeout(r, 1_000));
    return false;
  }, 30_000, 500);
  await until('"Forgotten (restorable)" gone', async () => !(await page.locator('.monaco-list-row', { hasText: 'Forgotten (restorable)' }).first().isVisible()), 10_000, 250)
    .catch(() => fail('the restored memory is still listed as forgotten'));
  done();

  done = step('a changed mira.completion.* setting restarts the server, and completion uses it');
  const servingBefore = ourServers();
  await changeSettings({ 'mira.completion.model': 'gpt-4.1-nano' });
  await until('a new server process for the new [completion]', async () => {
    const now = ourServers();
    return now.length === 1 && !servingBefore.includes(now[0]);
  }, 20_000, 250).catch((e) => fail(`changing mira.completion.model did not restart the server: ${e.message}`));
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.press('Enter');
  await until('ghost text from the restarted server', async () => {
    // The new server may still be starting: retype the trigger until it answers.
    await page.keyboard.press('Home');
    await page.keyboard.press('Shift+End');
    await page.keyboard.insertText(GHOST_LINE.trimEnd());
    await page.keyboard.type(' ');
    await until('ghost text', async () => (await ghostText()).includes(GHOST), 3_000, 100);
    return true;
  }, 30_000, 0);
  const nano = mock.requests.filter((r) => fimPrompt(r.body)).at(-1);
  if (nano.body.model !== 'gpt-4.1-nano') fail(`completion did not use mira.completion.model: it asked for ${nano.body.model}`);
  await page.keyboard.press('Escape');
  done();
} catch (e) {
  results.push({ name: current, ok: false, ms: 0 });
  console.error(`e2e FAILED in "${current}": ${e.stack ?? e}`);
  if (page) await page.screenshot({ path: path.join(artifacts, 'failure.png') }).catch(() => {});
  console.error(`e2e: artifacts (screenshots, code-server.log) in ${artifacts}; VS Code logs in ${path.join(userData, 'logs')}`);
} finally {
  await browser?.close().catch(() => {});
  for (const p of procs) {
    try {
      process.kill(-p.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  if (mock) fs.writeFileSync(path.join(artifacts, 'requests.json'), JSON.stringify(mock.requests.map((r) => r.body), null, 1));
  await mock?.close();
}

const passed = results.filter((r) => r.ok).length;
const failed = results.filter((r) => !r.ok).length;
console.log(`e2e: ${((Date.now() - started) / 1000).toFixed(1)} s in all; screenshot ${path.join(artifacts, 'chat.png')}`);
console.log(`e2e: ${passed} passed, ${failed} failed`);
if (failed === 0) fs.rmSync(tmp, { recursive: true, force: true });
process.exit(failed === 0 && passed > 0 ? 0 : 1);
