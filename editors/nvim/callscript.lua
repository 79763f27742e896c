-- callscript's language server (`callscript lsp --stdio`) in Neovim 0.7 and later: the checker's diagnostics,
-- go to definition, references and rename in the flows of a callscript project (docs/editors.md).
--
-- Copy this file to ~/.config/nvim/lua/callscript.lua, then in init.lua:
--
--   require('callscript').setup()
--
-- or, with the server of the project (npx finds node_modules/.bin/callscript from Neovim's working directory):
--
--   require('callscript').setup({ cmd = { 'npx', 'callscript', 'lsp', '--stdio' } })
--
-- The server gets the YAML files of a directory named `flows` (or below one) and callscript.yaml; give
-- `match = function(path) ... end` to choose otherwise. The YAML language server, if you use it, keeps the same
-- buffers: both attach side by side (schemas from `# yaml-language-server: $schema=...`, checks from callscript).
local M = {}

local defaults = {
  cmd = { 'callscript', 'lsp', '--stdio' },
  -- whether the buffer of the file at `path` (absolute) goes to the server
  match = function(path)
    return path:match('/flows/.+%.ya?ml$') ~= nil or path:match('/callscript%.ya?ml$') ~= nil
  end,
}

local function exists(path)
  return vim.loop.fs_stat(path) ~= nil
end

-- The project directory of a file: the one with callscript.yaml (the file's directory or the one above it, as
-- `callscript init` lays a project out), else the parent of the flows directory, else the file's directory.
local function root_of(path)
  local dir = vim.fn.fnamemodify(path, ':h')
  for _, d in ipairs({ dir, vim.fn.fnamemodify(dir, ':h') }) do
    if exists(d .. '/callscript.yaml') or exists(d .. '/callscript.yml') then
      return d
    end
  end
  local flows = path:match('^(.*)/flows/')
  return flows or dir
end

function M.setup(opts)
  opts = vim.tbl_extend('force', defaults, opts or {})
  local clients = {} -- Neovim 0.7: the client started for each project directory
  local function attach(buf, path)
    local config = { name = 'callscript', cmd = opts.cmd, root_dir = root_of(path) }
    if vim.lsp.start then
      -- Neovim 0.8 and later: starts the client, or reuses the one with the same name and root_dir
      vim.lsp.start(config, { bufnr = buf })
      return
    end
    -- Neovim 0.7: one client per project directory, started on its first flow, attached to each buffer
    local id = clients[config.root_dir]
    if id == nil or vim.lsp.get_client_by_id(id) == nil then
      id = vim.lsp.start_client(config)
      clients[config.root_dir] = id
    end
    if id ~= nil then
      vim.lsp.buf_attach_client(buf, id)
    end
  end
  vim.api.nvim_create_autocmd('FileType', {
    group = vim.api.nvim_create_augroup('callscript', { clear = true }),
    pattern = 'yaml',
    callback = function(args)
      local path = vim.api.nvim_buf_get_name(args.buf)
      if path ~= '' and opts.match(path) then
        attach(args.buf, path)
      end
    end,
  })
end

return M
