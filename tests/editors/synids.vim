" tests/editors/synids.vim: run by check.py in `vim -Es` on one .stn file.
" Writes to $STN_OUT a first line "FILETYPE SYNTAX COMMENTSTRING [LAST ERROR]",
" then for each line of the buffer the syntax group of each byte
" (synID(), transparent items resolved), space separated, '-' for none.
let s:out = [&filetype . ' ' . get(b:, 'current_syntax', '?') . ' ' . &commentstring . ' [' . v:errmsg . ']']
for s:lnum in range(1, line('$'))
  let s:names = []
  for s:col in range(1, len(getline(s:lnum)))
    let s:name = synIDattr(synID(s:lnum, s:col, 1), 'name')
    call add(s:names, empty(s:name) ? '-' : s:name)
  endfor
  call add(s:out, join(s:names, ' '))
endfor
call writefile(s:out, $STN_OUT)
