/** Flows of the web console's tests. */

/** A desk with every kind of edge: a retry, a flow-wide handler, set and when steps, the hangup handler. */
export const DESK = `version: 1
name: desk
start: hello
vars:
  visits: 0
handlers:
  hangup: log_end
  on:
    read:
      "0": operator
steps:
  hello:
    say: "Welcome to the desk."
    next: menu
  menu:
    read:
      prompt: "Press 1 for sales, 2 for help."
      max_digits: 1
    on:
      "1": sales
      "2": help
      TIMEOUT: { retry: 2, then: bye }
      default: bye
  sales:
    dialout:
      targets: [{ number: "+33123456789", timeout: 30 }]
    on:
      NOANSWER: bye
  help:
    say: "Help is on the way."
    next: count
  count:
    set:
      visits: { expr: "vars.visits + 1" }
    next: again
  again:
    when: "vars.visits < 2"
    then: menu
    else: bye
  operator:
    dialout:
      targets: [{ number: "+33123456700", timeout: 30 }]
    on:
      NOANSWER: bye
  bye:
    say: "Goodbye."
    next: end
  end:
    hangup: {}
  log_end:
    set:
      ended: "yes"
`;

/** The desk with another goodbye: a second version. */
export const DESK_V2 = DESK.replace('say: "Goodbye."', 'say: "Goodbye, and thank you."');
export const DESK_V3 = DESK.replace('say: "Goodbye."', 'say: "Bye now."');

/** A flow whose texts are markup: the console must show them as text. */
export const MARKUP = `version: 1
name: markup
start: hello
steps:
  hello:
    say: "<img src=x onerror=window.__pwned=1> & <script>window.__pwned=2</script>"
    next: end
  end:
    hangup: {}
`;
