// Numbers as the panel shows them (12,345): one formatter made once. Number.toLocaleString
// builds a formatter on every call, a cost paid per reply drawn.

const GROUPED = new Intl.NumberFormat("en-US");

export function fmt(n) {
  return GROUPED.format(Number(n || 0));
}

// A stored time (ms since the epoch) in the reader's locale; "" for none.
export function when(ms) {
  return ms ? new Date(ms).toLocaleString() : "";
}
