-- Ghost text for Neovims without `vim.lsp.inline_completion` (before 0.12): the plugin asks
-- Mira for `textDocument/inlineCompletion` as you type and draws the suggestion itself, as
-- extmark virtual text (inline on 0.10+, at the end of the line before). One request in
-- flight per buffer; a newer keystroke cancels the older one (Mira then drops its provider
-- call). The accept key inserts the whole suggestion; the word key inserts its next word.
local M = {}

local ns = vim.api.nvim_create_namespace('mira_ghost')
local new_api = vim.fn.has('nvim-0.11') == 1
local inline = vim.fn.has('nvim-0.10') == 1
-- bufnr -> { row, col, text, tick } while a suggestion is shown; { req = {client, id} } while asked
local shown = {}
local pending = {}

local function cancel(buf)
  local p = pending[buf]
  pending[buf] = nil
  if p then
    pcall(function()
      if new_api then p.client:cancel_request(p.id) else p.client.cancel_request(p.id) end
    end)
  end
end

--- Remove the suggestion (and stop asking for one) in `buf`.
function M.clear(buf)
  cancel(buf)
  shown[buf] = nil
  if vim.api.nvim_buf_is_valid(buf) then vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1) end
end

local function draw(buf, s)
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  local lines = vim.split(s.text, '\n', { plain = true })
  local opts = {
    virt_text = { { lines[1], 'Comment' } },
    virt_text_pos = inline and 'inline' or 'eol',
    hl_mode = 'combine',
  }
  if #lines > 1 then
    opts.virt_lines = {}
    for i = 2, #lines do table.insert(opts.virt_lines, { { lines[i], 'Comment' } }) end
  end
  vim.api.nvim_buf_set_extmark(buf, ns, s.row, s.col, opts)
  shown[buf] = s
end

local function byte_col(line, character, encoding)
  if encoding == 'utf-8' then return math.min(character, #line) end
  local ok, col = pcall(vim.str_byteindex, line, character, encoding == 'utf-16')
  if ok then return col end
  return math.min(character, #line)
end

--- What to show from `item`, for the cursor at (row, col): the part not typed yet.
local function remainder(buf, item, row, col, encoding)
  local text = item.insertText
  if type(text) == 'table' then text = text.value end
  if type(text) ~= 'string' or text == '' then return nil end
  local range = item.range
  if range and range.start then
    local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
    local from = range.start.line == row and byte_col(line, range.start.character, encoding) or col
    local typed = line:sub(from + 1, col)
    if typed ~= '' then
      if text:sub(1, #typed) ~= typed then return nil end
      text = text:sub(#typed + 1)
    end
  end
  return text ~= '' and text or nil
end

--- Ask Mira for a suggestion at the cursor of the current window (in `buf`).
function M.request(buf, client)
  M.clear(buf)
  local win = vim.api.nvim_get_current_win()
  local cursor = vim.api.nvim_win_get_cursor(win)
  local row, col = cursor[1] - 1, cursor[2]
  local params = vim.lsp.util.make_position_params(win, client.offset_encoding)
  params.context = { triggerKind = 2 }
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  local function handler(err, result)
    pending[buf] = nil
    if err or not result or vim.api.nvim_buf_get_changedtick(buf) ~= tick then return end
    if not vim.api.nvim_get_mode().mode:find('^i') then return end
    local now = vim.api.nvim_win_get_cursor(0)
    if now[1] - 1 ~= row or now[2] ~= col then return end
    local items = result.items or result
    local item = type(items) == 'table' and items[1]
    local text = item and remainder(buf, item, row, col, client.offset_encoding)
    if text then draw(buf, { row = row, col = col, text = text, tick = tick }) end
  end
  local ok, id
  if new_api then
    ok, id = client:request('textDocument/inlineCompletion', params, handler, buf)
  else
    ok, id = client.request('textDocument/inlineCompletion', params, handler, buf)
  end
  if ok then pending[buf] = { client = client, id = id } end
end

--- Insert the suggestion (or, with `word`, its next word) at the cursor. Returns whether
--- there was one to insert.
function M.accept(buf, word)
  local s = shown[buf]
  if not s or vim.api.nvim_buf_get_changedtick(buf) ~= s.tick then return false end
  local text, rest = s.text, ''
  if word then
    local piece = text:match('^%s*[%w_]+') or text:match('^%s*[^%w_%s]') or text:match('^%s+') or text
    text, rest = piece, text:sub(#piece + 1)
  end
  M.clear(buf)
  local lines = vim.split(text, '\n', { plain = true })
  vim.api.nvim_buf_set_text(buf, s.row, s.col, s.row, s.col, lines)
  local row = s.row + #lines - 1
  local col = #lines == 1 and s.col + #lines[1] or #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { row + 1, col })
  if rest ~= '' then
    draw(buf, { row = row, col = col, text = rest, tick = vim.api.nvim_buf_get_changedtick(buf) })
  end
  return true
end

--- Draw Mira's suggestions in `buf` for `client_id`; `keys.accept` and `keys.word` accept
--- them (each does what it did before when nothing is shown).
function M.enable(buf, client_id, keys)
  local group = vim.api.nvim_create_augroup('mira_ghost_' .. buf, { clear = true })
  local timer
  local function ask()
    local client = vim.lsp.get_client_by_id(client_id)
    if not client or vim.api.nvim_get_current_buf() ~= buf then return end
    M.request(buf, client)
  end
  vim.api.nvim_create_autocmd({ 'TextChangedI', 'TextChangedP' }, {
    group = group,
    buffer = buf,
    callback = function()
      M.clear(buf)
      if timer then timer:stop() end
      timer = vim.defer_fn(ask, 30)
    end,
  })
  vim.api.nvim_create_autocmd('CursorMovedI', {
    group = group,
    buffer = buf,
    callback = function()
      local s = shown[buf]
      local c = vim.api.nvim_win_get_cursor(0)
      if s and (c[1] - 1 ~= s.row or c[2] ~= s.col) then M.clear(buf) end
    end,
  })
  vim.api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave' }, {
    group = group,
    buffer = buf,
    callback = function() M.clear(buf) end,
  })
  local function map(key, word)
    if not key then return end
    vim.keymap.set('i', key, function()
      if not M.accept(buf, word) then
        vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(key, true, false, true), 'n', false)
      end
    end, { buffer = buf, desc = word and 'Mira: accept a word of the suggestion' or 'Mira: accept the suggestion' })
  end
  map(keys.accept, false)
  map(keys.word, true)
end

return M
