-- The init file of the headless Neovim that test/lsp/neovim.test.ts starts: the setup docs/editors.md shows
-- (editors/nvim/callscript.lua) with the test's server command, then, once Neovim has opened the flow, a scenario:
-- wait for the diagnostics, rename a step, write the file, look at two more buffers; what it saw goes to a JSON
-- file, and Neovim quits whatever happens (an error is written there too).
local env = vim.json.decode(os.getenv('CALLSCRIPT_NVIM_TEST'))
dofile(env.plugin).setup({ cmd = env.cmd })

local function clients(buf)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = buf })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(buf))
end

-- 'name:id,...' ('' for none: an empty Lua table has no JSON type of its own)
local function client_ids(buf)
  return table.concat(
    vim.tbl_map(function(c)
      return c.name .. ':' .. c.id
    end, clients(buf)),
    ','
  )
end

local function scenario(seen)
  local buf = vim.api.nvim_get_current_buf()
  seen.diagnosed = vim.wait(env.timeout, function()
    return #vim.diagnostic.get(buf) > 0
  end, 20)
  seen.clients = client_ids(buf)
  seen.diagnostics = vim.tbl_map(function(d)
    return {
      lnum = d.lnum,
      col = d.col,
      end_lnum = d.end_lnum,
      end_col = d.end_col,
      severity = d.severity,
      code = d.code,
      source = d.source,
      message = d.message,
    }
  end, vim.diagnostic.get(buf))

  local params = {
    textDocument = vim.lsp.util.make_text_document_params(buf),
    position = env.rename.position,
    newName = env.rename.newName,
  }
  seen.rename = { answers = 0 }
  -- Neovim 0.7 waits the whole timeout when no client of the buffer advertised renameProvider
  local capable = vim.tbl_filter(function(c)
    local caps = c.server_capabilities or c.resolved_capabilities
    return caps.renameProvider or caps.rename
  end, clients(buf))
  if #capable == 0 then
    seen.rename.error = 'no client of the buffer advertises renameProvider'
    return
  end
  local responses, err = vim.lsp.buf_request_sync(buf, 'textDocument/rename', params, env.timeout)
  seen.rename.error = err
  for id, response in pairs(responses or {}) do
    seen.rename.answers = seen.rename.answers + 1
    if response.error then
      seen.rename.error = response.error.message
    elseif response.result then
      vim.lsp.util.apply_workspace_edit(response.result, vim.lsp.get_client_by_id(id).offset_encoding)
    end
  end
  vim.cmd('write')

  -- another flow of the directory goes to the same client; a YAML file outside flows/ to none
  vim.cmd('edit ' .. vim.fn.fnameescape(env.sibling))
  seen.sibling_clients = client_ids(0)
  vim.cmd('edit ' .. vim.fn.fnameescape(env.outside))
  seen.outside_clients = client_ids(0)
end

vim.api.nvim_create_autocmd('VimEnter', {
  nested = true, -- the :edit of the scenario fires FileType, which attaches the client
  callback = function()
    local seen = {}
    local ok, err = pcall(scenario, seen)
    if not ok then
      seen.error = tostring(err)
    end
    local out = assert(io.open(env.out, 'w'))
    out:write(vim.json.encode(seen))
    out:close()
    vim.cmd('qall!')
  end,
})
