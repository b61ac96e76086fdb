-- Mira for Neovim's built-in LSP client (0.7+; 0.8+ recommended). See `:help mira`.
--   require('mira').setup({})            -- attach to every file buffer
--   require('mira').setup({ filetypes = { 'rust', 'python' }, keymaps = true })
-- Code actions (vim.lsp.buf.code_action()): Ask Mira about `name`, explain / edit / remember
-- selection, fix a diagnostic, apply or reject a proposal.
-- Commands: :MiraAsk [question], :MiraEdit [instruction], :MiraRemember [text],
-- :MiraRecall {query}, :MiraMemories, :MiraGoals, :MiraForget {id}, :MiraStatus, :MiraCancel,
-- :MiraConversation, :MiraReindex, :MiraRestart. Health: :checkhealth mira
-- A server that dies is started again (0.5 s, 1 s, 2 s … apart; said once per stop).
local M = {}

M.defaults = {
  cmd = { 'mira', 'lsp' },
  -- nil: every buffer backed by a file; or a list of filetypes
  filetypes = nil,
  root_markers = { '.mira', '.git', 'Cargo.toml', 'package.json', 'pyproject.toml', 'go.mod' },
  -- sent as initializationOptions.mira (same keys as ~/.config/mira/config.toml)
  settings = { notifications = true },
  -- true: <leader>ma ask, <leader>me edit, <leader>mr remember, <leader>ms recall,
  -- <leader>mc conversation, <leader>m. code actions (normal and visual mode)
  keymaps = false,
  -- where the transcript opens: 'split' (below) or 'vsplit' (right)
  transcript = 'split',
  -- ghost text from Mira's inline completion (Neovim 0.12+, `vim.lsp.inline_completion`),
  -- when the server offers it (a `[completion]` provider is configured)
  inline_completion = true,
  -- insert-mode key that accepts the ghost text on 0.12+ (nil: none; `vim.lsp.inline_completion.get()`)
  accept_completion = nil,
  -- before 0.12 the plugin draws the ghost text itself; these insert-mode keys accept all of
  -- it or its next word (each does what it did before when nothing is shown)
  ghost_keys = { accept = '<Tab>', word = '<C-Right>' },
}

local new_api = vim.fn.has('nvim-0.11') == 1
M.options = vim.deepcopy(M.defaults)

local function find_root(path, markers)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  while dir and dir ~= '' do
    for _, m in ipairs(markers) do
      if vim.loop.fs_stat(dir .. '/' .. m) then return dir end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then break end
    dir = parent
  end
  return vim.fn.getcwd()
end

local function stopped(c)
  if new_api then return c:is_stopped() end
  return c.is_stopped()
end

function M.client()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in pairs(get()) do
    if c.name == 'mira' and not stopped(c) then return c end
  end
end

-- Restarts -----------------------------------------------------------------------------------
-- The server process can die (a bug, the OOM killer, kill -9). Every buffer Mira attached is
-- remembered; when the process ends without Neovim asking it to, the plugin says so once and
-- starts it again after a pause that doubles up to 30 s. A server that lived a minute resets
-- the pause. After 6 quick deaths in a row it stops trying until :MiraRestart.

local life = {
  buffers = {},   -- bufnr -> true: buffers Mira was attached to
  leaving = false, -- Neovim is quitting: an exit is expected
  -- nil while running; else { why = 'signal 9', restarting = bool }
  down = nil,
  tries = 0,
  started_at = 0,
}
local MAX_TRIES = 6

local function describe_exit(code, signal)
  if signal and signal ~= 0 then return 'killed by signal ' .. signal end
  return 'exited with code ' .. tostring(code)
end

local function reattach()
  local any = false
  for buf in pairs(life.buffers) do
    if vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_is_loaded(buf) then
      any = M.attach(buf) ~= nil or any
    else
      life.buffers[buf] = nil
    end
  end
  return any
end

local function exiting()
  return life.leaving or (vim.v.exiting ~= nil and vim.v.exiting ~= vim.NIL)
end

local function on_exit(code, signal)
  if exiting() or (code == 0 and (signal or 0) == 0) then return end
  -- State first (a fast-event callback may set Lua values); the editor is touched scheduled.
  local why = describe_exit(code, signal)
  local quick = (vim.loop.now() - life.started_at) < 60000
  life.tries = quick and life.tries + 1 or 1
  local first = life.down == nil
  life.down = { why = why, restarting = life.tries <= MAX_TRIES }
  vim.schedule(function()
    if exiting() then return end
    if not life.down.restarting then
      vim.notify('Mira: the server keeps stopping (' .. why .. '); :MiraRestart tries again, '
        .. '`mira doctor` shows the last crash', vim.log.levels.ERROR)
      return
    end
    if first then
      vim.notify('Mira: the server stopped (' .. why .. '); restarting it', vim.log.levels.WARN)
    end
    vim.defer_fn(function()
      if exiting() then return end
      if reattach() then life.down = nil end
    end, math.min(500 * 2 ^ (life.tries - 1), 30000))
  end)
end

--- Start Mira again for every buffer it was attached to (after it stopped for good).
function M.restart()
  life.tries, life.down = 0, nil
  local c = M.client()
  if c then
    if new_api then c:stop() else c.stop() end
    life.leaving = true
    vim.wait(3000, function() return stopped(c) end, 20)
    life.leaving = false
  end
  if not reattach() then
    vim.notify('Mira: no buffer to attach to (open a file in a project)', vim.log.levels.WARN)
  end
end

--- Why there is no Mira client, in words a user can act on.
local function absent()
  if life.down and life.down.restarting then
    return 'Mira: the server stopped (' .. life.down.why .. ') and is restarting; try again in a moment'
  elseif life.down then
    return 'Mira: the server stopped (' .. life.down.why .. '); :MiraRestart starts it again, '
      .. '`mira doctor` shows the last crash'
  elseif next(life.buffers) then
    return 'Mira: the server is starting; try again in a moment'
  end
  return 'Mira is not attached to any buffer yet: open a file (it attaches to files in a project)'
end

local function request(c, method, params, handler, buf)
  if new_api then return c:request(method, params, handler, buf) end
  return c.request(method, params, handler, buf)
end

local function notify_error(err)
  vim.notify('Mira: ' .. (err.message or tostring(err)), vim.log.levels.ERROR)
end

--- Send a request to Mira; `on_result(result)` gets the answer.
function M.request(method, params, on_result)
  local c = M.client()
  if not c then
    vim.notify(absent(), vim.log.levels.WARN)
    return
  end
  request(c, method, params, function(err, result)
    if err then notify_error(err) elseif on_result then on_result(result) end
  end)
end

--- Run a Mira command; `on_result(result)` gets what the server answered.
function M.execute(command, args, on_result)
  M.request('workspace/executeCommand', { command = command, arguments = args or {} }, on_result)
end

-- The transcript ---------------------------------------------------------------------------

local following = {}

-- The transcript is a view Mira owns, regenerated from its database (the database has every
-- answer; Mira keeps the file on disk in step). A scratch buffer, so it never blocks :qa and
-- never asks to be written.
local function own_transcript(buf)
  if vim.bo[buf].buftype ~= 'nofile' then
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
  end
end

--- Show the transcript in a split (reused when visible) that follows streamed text; the
--- cursor stays where it was.
function M.show_transcript(path)
  local buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  own_transcript(buf)
  local win
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(w) == buf then win = w end
  end
  if not win then
    local back = vim.api.nvim_get_current_win()
    vim.cmd((M.options.transcript == 'vsplit' and 'botright vsplit ' or 'botright split ')
      .. vim.fn.fnameescape(path))
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_set_current_win(back)
  end
  if not following[buf] then
    following[buf] = true
    vim.api.nvim_buf_attach(buf, false, {
      on_lines = function()
        vim.schedule(function()
          if not vim.api.nvim_buf_is_valid(buf) then return end
          local last = vim.api.nvim_buf_line_count(buf)
          for _, w in ipairs(vim.api.nvim_list_wins()) do
            if vim.api.nvim_win_get_buf(w) == buf and w ~= vim.api.nvim_get_current_win() then
              pcall(vim.api.nvim_win_set_cursor, w, { last, 0 })
            end
          end
        end)
      end,
      on_detach = function() following[buf] = nil end,
    })
  end
  pcall(vim.api.nvim_win_set_cursor, win, { vim.api.nvim_buf_line_count(buf), 0 })
  return buf
end

local function transcript_path(uri)
  local path = vim.uri_to_fname(uri)
  if path:match('conversation%.md$') then return path end
end

local function edited_uris(edit)
  local uris = {}
  for uri in pairs(edit and edit.changes or {}) do table.insert(uris, uri) end
  for _, dc in ipairs(edit and edit.documentChanges or {}) do
    if dc.textDocument then table.insert(uris, dc.textDocument.uri) end
  end
  return uris
end

-- Progress and short messages ------------------------------------------------------------------
-- One line in the command line, replaced in place and cut to fit, so Mira never causes a
-- hit-enter prompt (cmdheight=1); warnings and errors go through vim.notify in full.

local progress = { text = '' }

--- For your statusline: "Mira: answering…" (or the tool it runs) while a turn runs, else ''.
function M.statusline()
  return progress.text
end

local pending_echo
local function echo(text)
  local first = pending_echo == nil
  pending_echo = text
  if not first then return end
  vim.schedule(function()
    local line = pending_echo
    pending_echo = nil
    local width = math.max((vim.v.echospace or (vim.o.columns - 12)) - 1, 10)
    if vim.fn.strdisplaywidth(line) > width then
      line = vim.fn.strcharpart(line, 0, width - 1) .. '…'
    end
    vim.cmd('redraw')
    vim.api.nvim_echo({ { line } }, true, {})
  end)
end

local function set_progress(text)
  progress.text = text
  pcall(vim.cmd, 'redrawstatus')
  if text ~= '' then echo(text) end
end

M.handlers = {
  ['window/showMessage'] = function(err, result, ctx, config)
    -- Info and log lines (a status, "remembered #12") are echoed in place; problems in full.
    if result and result.type and result.type >= 3 then
      echo(result.message)
      return
    end
    return vim.lsp.handlers['window/showMessage'](err, result, ctx, config)
  end,
  ['workspace/applyEdit'] = function(err, result, ctx, config)
    local answer = vim.lsp.handlers['workspace/applyEdit'](err, result, ctx, config)
    for _, uri in ipairs(edited_uris(result and result.edit)) do
      if transcript_path(uri) then own_transcript(vim.uri_to_bufnr(uri)) end
    end
    return answer
  end,
  ['window/showDocument'] = function(err, result, ctx, config)
    local path = result and result.uri and transcript_path(result.uri)
    if path then
      M.show_transcript(path)
      return { success = true }
    end
    local default = vim.lsp.handlers['window/showDocument']
    if default then return default(err, result, ctx, config) end
    return { success = false }
  end,
  -- 0.7 does not advertise showDocument: open the transcript when a turn starts.
  ['mira/turnStarted'] = function()
    set_progress('Mira: answering…')
    if vim.fn.has('nvim-0.8') == 0 then
      M.execute('mira.openConversation', {}, function(r)
        if r and r.uri and r.uri ~= vim.NIL then M.show_transcript(vim.uri_to_fname(r.uri)) end
      end)
    end
  end,
  ['mira/delta'] = function() end,
  ['mira/toolCall'] = function(_, r)
    if r and r.summary then set_progress('Mira: ' .. r.summary .. '…') end
  end,
  ['mira/turnFinished'] = function(_, r)
    progress.text = ''
    -- The scratch transcript is not tied to its file: keep the copy on disk in step.
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      local name = vim.api.nvim_buf_get_name(b)
      if vim.api.nvim_buf_is_loaded(b) and name:match('conversation%.md$') and vim.bo[b].buftype == 'nofile' then
        pcall(vim.fn.writefile, vim.api.nvim_buf_get_lines(b, 0, -1, false), name)
      end
    end
    pcall(vim.cmd, 'redrawstatus')
    -- A failed turn is reported by the server as a warning (with its reason and fix).
    if r and r.status == 'completed' and r.usage then
      local cost = (type(r.costUsd) == 'number') and string.format(', $%.4f', r.costUsd) or ''
      echo(string.format('Mira answered (%d tokens in, %d out%s)', r.usage.inputTokens or 0,
        r.usage.outputTokens or 0, cost))
    elseif r and r.status == 'cancelled' then
      echo('Mira: cancelled')
    end
  end,
}

-- Prompts for commands a code action leaves open ------------------------------------------

local function input(prompt, on_text)
  vim.ui.input({ prompt = prompt }, function(text)
    if text and vim.trim(text) ~= '' then on_text(text) end
  end)
end

local function run_with(ctx, command, args)
  local c = vim.lsp.get_client_by_id(ctx.client_id) or M.client()
  if not c then return end
  request(c, 'workspace/executeCommand', { command = command, arguments = { args } }, function(err)
    if err then notify_error(err) end
  end, ctx.bufnr)
end

-- "Mira: edit selection…" and "Mira: remember selection…" carry no text: ask for it here.
local client_commands = {
  ['mira.edit'] = function(command, ctx)
    local args = vim.deepcopy((command.arguments or {})[1] or {})
    if type(args) == 'table' and (args.instruction or '') == '' then
      input('Mira, edit the selection: ', function(text)
        args.instruction = text
        run_with(ctx, 'mira.edit', args)
      end)
    else
      run_with(ctx, 'mira.edit', args)
    end
  end,
  ['mira.remember'] = function(command, ctx)
    local args = vim.deepcopy((command.arguments or {})[1] or {})
    if type(args) == 'table' and (args.text or '') == '' then
      input('Mira, remember about this code: ', function(text)
        args.text = text
        run_with(ctx, 'mira.remember', args)
      end)
    else
      run_with(ctx, 'mira.remember', args)
    end
  end,
}

-- Lists through vim.ui.select ---------------------------------------------------------------

local function anchor_label(m)
  local a = m.anchors and m.anchors[1]
  if not a then return '' end
  local stale = a.stale_since ~= nil and a.stale_since ~= vim.NIL
  return string.format('  @%s::%s%s', a.anchor.path, a.anchor.symbol, stale and ' (stale)' or '')
end

function M.format_memory(m)
  local status = m.status ~= 'active' and (' [' .. m.status .. ']') or ''
  return string.format('#%d %s: %s%s%s', m.id, m.kind, m.body:gsub('%s+', ' '), status, anchor_label(m))
end

local function open_anchor(m)
  local a = m.anchors and m.anchors[1]
  local c = M.client()
  if not a or not c then
    vim.notify('Mira: #' .. m.id .. ' is not anchored to code', vim.log.levels.INFO)
    return
  end
  local path = a.anchor.path
  if not path:match('^/') then path = (c.config.root_dir or vim.fn.getcwd()) .. '/' .. path end
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local name = a.anchor.symbol:match('([%w_$]+)$') or a.anchor.symbol
  vim.fn.search('\\<' .. vim.fn.escape(name, '\\') .. '\\>', 'cw')
end

--- Pick a memory, then what to do with it (forget, restore, open its anchor).
function M.select_memories(memories, prompt)
  if not memories or #memories == 0 then
    vim.notify('Mira: nothing found', vim.log.levels.INFO)
    return
  end
  vim.ui.select(memories, { prompt = prompt, format_item = M.format_memory }, function(m)
    if not m then return end
    local actions = { 'Forget', 'Restore', 'Open anchor' }
    vim.ui.select(actions, { prompt = '#' .. m.id }, function(choice)
      if choice == 'Forget' then M.execute('mira.forget', { { id = m.id } })
      elseif choice == 'Restore' then M.execute('mira.forget', { { id = m.id, restore = true } })
      elseif choice == 'Open anchor' then open_anchor(m) end
    end)
  end)
end

function M.recall(query)
  M.execute('mira.recall', { { query = query, limit = 20 } }, function(r)
    M.select_memories(r and r.memories, 'Mira recalls')
  end)
end

function M.memories()
  M.request('mira/memories', { limit = 100 }, function(r)
    M.select_memories(r and r.memories, 'Mira remembers')
  end)
end

function M.goals()
  M.request('mira/goals', vim.empty_dict(), function(r)
    local goals = (r and r.goals) or {}
    if #goals == 0 then
      vim.notify('Mira: no active goals (add one with `mira goals add`)', vim.log.levels.INFO)
      return
    end
    vim.ui.select(goals, {
      prompt = 'Mira goals',
      format_item = function(g) return string.format('#%d %s (%d%%, %s)', g.id, g.title, g.progress, g.status) end,
    }, function() end)
  end)
end

-- Setup ---------------------------------------------------------------------------------------

--- Turn on ghost text for `buf` once Mira is up, if this Neovim has it (0.12+) and Mira
--- advertises `inlineCompletionProvider`. Returns whether it was enabled.
function M.enable_inline_completion(buf, id, opts)
  opts = opts or M.options
  local ic = vim.lsp.inline_completion
  if not (opts.inline_completion and id) then return false end
  local c = vim.lsp.get_client_by_id(id)
  local caps = c and c.server_capabilities
  if not (caps and caps.inlineCompletionProvider) then return false end
  if not (ic and ic.enable) then
    -- Before 0.12: the plugin draws it (extmarks).
    require('mira.ghost').enable(buf, id, opts.ghost_keys or {})
    return true
  end
  ic.enable(true, { bufnr = buf, client_id = id })
  if opts.accept_completion and ic.get then
    vim.keymap.set('i', opts.accept_completion, function()
      if not ic.get() then
        return vim.api.nvim_replace_termcodes(opts.accept_completion, true, false, true)
      end
    end, { buffer = buf, expr = true, desc = 'Mira: accept the completion' })
  end
  return true
end

--- Neovim's omnifunc inserts a text edit only up to its first blank (`vim.lsp.omnifunc`
--- takes the "word" of an item), so a suggestion from Mira's popup item would stop after
--- one word. When one of Mira's items is chosen, the rest of it is inserted.
local function complete_whole_suggestions()
  vim.api.nvim_create_autocmd('CompleteDone', {
    group = vim.api.nvim_create_augroup('mira_popup', { clear = true }),
    callback = function()
      local done = vim.v.completed_item
      local ud = type(done) == 'table' and done.user_data
      local lsp = type(ud) == 'table' and ud.nvim and ud.nvim.lsp
      local item = lsp and lsp.completion_item
      if not (item and item.detail == 'Mira' and item.textEdit and done.word) then return end
      local full = item.textEdit.newText or ''
      if #full <= #done.word or full:sub(1, #done.word) ~= done.word then return end
      local rest = vim.split(full:sub(#done.word + 1), '\n', { plain = true })
      local pos = vim.api.nvim_win_get_cursor(0)
      local row, col = pos[1] - 1, pos[2]
      vim.api.nvim_buf_set_text(0, row, col, row, col, rest)
      local last = row + #rest - 1
      vim.api.nvim_win_set_cursor(0, { last + 1, #rest == 1 and col + #rest[1] or #rest[#rest] })
    end,
  })
end

--- Wait for the client's `initialize` answer without blocking the editor, then enable.
local function when_ready(buf, id, opts)
  if not opts.inline_completion then return end
  local tries = 0
  local function check()
    local c = vim.lsp.get_client_by_id(id)
    if c and c.initialized then
      M.enable_inline_completion(buf, id, opts)
    elseif c and tries < 200 then
      tries = tries + 1
      vim.defer_fn(check, 50)
    end
  end
  check()
end

function M.attach(buf, opts)
  opts = opts or M.options
  local name = vim.api.nvim_buf_get_name(buf)
  if name == '' or vim.bo[buf].buftype ~= '' then return end
  local config = {
    name = 'mira',
    cmd = opts.cmd,
    root_dir = find_root(name, opts.root_markers),
    init_options = { mira = opts.settings },
    capabilities = vim.lsp.protocol.make_client_capabilities(),
    handlers = M.handlers,
    on_init = function() life.started_at = vim.loop.now() end,
    on_exit = on_exit,
  }
  life.buffers[buf] = true
  if vim.lsp.start then
    local id = vim.lsp.start(config, { bufnr = buf })
    if id then when_ready(buf, id, opts) end
    return id
  end
  -- 0.7: one client per root, reused across buffers
  M._ids = M._ids or {}
  local id = M._ids[config.root_dir]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(config)
    M._ids[config.root_dir] = id
  end
  vim.lsp.buf_attach_client(buf, id)
  if id then when_ready(buf, id, opts) end
  return id
end

local function here(a)
  local buf = vim.api.nvim_get_current_buf()
  local at = { uri = vim.uri_from_bufnr(buf) }
  if a and a.range and a.range > 0 then
    local last = vim.fn.getline(a.line2)
    at.range = { start = { line = a.line1 - 1, character = 0 }, ['end'] = { line = a.line2 - 1, character = #last } }
  else
    local pos = vim.api.nvim_win_get_cursor(0)
    at.position = { line = pos[1] - 1, character = pos[2] }
  end
  return at
end

local function keymaps()
  local map = function(modes, lhs, rhs, desc) vim.keymap.set(modes, lhs, rhs, { desc = desc }) end
  map('n', '<leader>ma', '<cmd>MiraAsk<cr>', 'Mira: ask')
  map('x', '<leader>ma', ':MiraAsk<cr>', 'Mira: ask about the selection')
  map('x', '<leader>me', ':MiraEdit<cr>', 'Mira: edit the selection')
  map('x', '<leader>mr', ':MiraRemember<cr>', 'Mira: remember about the selection')
  map('n', '<leader>mr', '<cmd>MiraRemember<cr>', 'Mira: remember')
  map('n', '<leader>ms', function() input('Mira recall: ', M.recall) end, 'Mira: recall')
  map('n', '<leader>mc', '<cmd>MiraConversation<cr>', 'Mira: conversation')
  map({ 'n', 'x' }, '<leader>m.', vim.lsp.buf.code_action, 'Mira: code actions')
end

function M.setup(opts)
  opts = vim.tbl_deep_extend('force', M.defaults, opts or {})
  M.options = opts
  for name, fn in pairs(client_commands) do vim.lsp.commands[name] = fn end
  local group = vim.api.nvim_create_augroup('mira', { clear = true })
  vim.api.nvim_create_autocmd(opts.filetypes and 'FileType' or 'BufReadPost', {
    group = group,
    pattern = opts.filetypes or '*',
    callback = function(ev) M.attach(ev.buf, opts) end,
  })
  local cmd = vim.api.nvim_create_user_command
  cmd('MiraAsk', function(a)
    local ask = function(q)
      local at = here(a)
      at.question = q
      M.execute('mira.ask', { at })
    end
    if a.args ~= '' then ask(a.args) else input('Ask Mira: ', ask) end
  end, { nargs = '*', range = true, desc = 'Ask Mira (global conversation, with this buffer as context)' })
  cmd('MiraEdit', function(a)
    local edit = function(instruction)
      local at = here(a)
      at.position = nil
      at.instruction = instruction
      M.execute('mira.edit', { at })
    end
    if a.args ~= '' then edit(a.args) else input('Mira, edit: ', edit) end
  end, { nargs = '*', range = true, desc = 'Ask Mira to edit the selection (or this buffer)' })
  cmd('MiraRemember', function(a)
    local remember = function(text)
      local args = { text = text }
      if a.range > 0 then
        local at = here(a)
        args.uri, args.range = at.uri, at.range
      end
      M.execute('mira.remember', { args })
    end
    if a.args ~= '' then remember(a.args) else input('Mira, remember: ', remember) end
  end, { nargs = '*', range = true, desc = 'Remember a note (anchored to the selected code with a range)' })
  cmd('MiraRecall', function(a) M.recall(a.args) end, { nargs = '+' })
  cmd('MiraMemories', function() M.memories() end, {})
  cmd('MiraGoals', function() M.goals() end, {})
  cmd('MiraForget', function(a) M.execute('mira.forget', { a.args }) end, { nargs = 1 })
  -- The server echoes the summary (window/showMessage, one line in place); the result is kept.
  cmd('MiraStatus', function() M.execute('mira.status', {}, function(r)
    M.status_cache = r
  end) end, {})
  cmd('MiraCancel', function() M.execute('mira.cancel', {}) end, {})
  cmd('MiraConversation', function() M.execute('mira.openConversation', {}, function(r)
    if r and r.uri and r.uri ~= vim.NIL then M.show_transcript(vim.uri_to_fname(r.uri)) end
  end) end, {})
  cmd('MiraReindex', function() M.execute('mira.reindex', {}) end, {})
  cmd('MiraRestart', function() M.restart() end, { desc = 'Start Mira\'s server again' })
  vim.api.nvim_create_autocmd('VimLeavePre', {
    group = group,
    callback = function() life.leaving = true end,
  })
  if opts.keymaps then keymaps() end
  complete_whole_suggestions()
  -- Buffers already open when setup runs (e.g. `nvim file` with lazy loading).
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      local ft = vim.bo[buf].filetype
      if not opts.filetypes or vim.tbl_contains(opts.filetypes, ft) then M.attach(buf, opts) end
    end
  end
end

return M
