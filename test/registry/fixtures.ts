/** Two versions of the `desk` flow for reload tests. */
export const V1 = `version: 1
name: desk
start: menu
steps:
  menu:
    read:
      prompt: "Press 1 for sales."
      max_digits: 1
    on:
      "1": sales
      default: bye
  sales:
    dialout:
      targets: [{ number: "+33123456789", timeout: 30 }]
    on:
      NOANSWER: bye
  bye:
    say: "Goodbye."
    next: end
  end:
    hangup: {}
`;

/** v2: menu's prompt changed, sales removed, a new `help` step, bye and end moved only. */
export const V2 = `version: 1
name: desk
start: menu
steps:
  menu:
    read:
      prompt: "Press 1 for help."
      max_digits: 1
    on:
      "1": help
      default: bye

  help:
    say: "Help is on the way."
    next: bye
  bye:
    say: "Goodbye."
    next: end
  end:
    hangup: {}
`;
