// A windowed list: of a long list of items (indices 0 … length-1) only those in or near the
// viewport are DOM nodes. A spacer above and one below stand for the others, sized from the
// heights measured when they were last drawn, or from the average height for items never drawn.
//
// The list owns the part of its container between its two spacers; whatever the caller appends
// after the bottom spacer (a reply being streamed) stays at the end. `render(i)` builds the node
// of item i, or returns null while its data is not loaded (a placeholder of the estimated height
// is drawn, and `missing(i)` is asked for the data; call `loaded()` once it is there).
// When the window moves, the first visible item keeps its place on screen; while `stuck()` says
// the view follows the end, the end is drawn. A list of at most SMALL items is drawn whole.
//
// Items never drawn count at the estimate `est` (the average measured height), which changes
// only when the window is drawn again: between two draws the spacers and the heights agree, so
// a scroll position always maps to the same item.

const OVERSCAN = 1; // viewports drawn above and below the visible part
const MAX_CACHED = 300; // nodes kept off screen (an open edit box is never dropped)
const DEFAULT_HEIGHT = 120;
const SMALL = 80; // a list this short is drawn whole

function spacer(name) {
  const node = document.createElement("div");
  node.className = `window-spacer ${name}`;
  node.setAttribute("aria-hidden", "true");
  node.hidden = true;
  return node;
}

export class WindowedList {
  constructor({ scroller, list, render, missing, stuck = () => false }) {
    this.scroller = scroller;
    this.stuck = stuck; // whether the view follows the end of the list
    this.list = list;
    this.render = render;
    this.missing = missing;
    this.length = 0;
    this.heights = []; // slot heights (node + gap) of items measured once, else undefined
    this.sum = 0; // of the measured heights, for the estimate
    this.count = 0;
    this.est = DEFAULT_HEIGHT;
    this.redrawNext = false;
    this.lo = 0; // the drawn range [lo, hi)
    this.hi = 0;
    this.drawn = []; // the nodes of lo … hi-1, in order
    this.cache = new Map(); // index → node, drawn and recently drawn
    this.top = spacer("above");
    this.bottom = spacer("below");
    this.frame = 0;
    scroller.addEventListener("scroll", () => this.schedule(), { passive: true });
    // Tab moves the focus (and scrolls) faster than a frame: draw what is next to it now, so
    // the next Tab finds the next bubble drawn.
    list.addEventListener("focusin", () => this.layout());
    if (typeof ResizeObserver === "function") {
      let width = scroller.clientWidth;
      new ResizeObserver(() => {
        if (scroller.clientWidth !== width) {
          width = scroller.clientWidth; // other widths, other heights: measure again as drawn
          this.forgetHeights();
          this.redrawNext = true;
        }
        this.schedule();
      }).observe(scroller);
    }
  }

  // -- the items ----------------------------------------------------------------------------

  // A new list of `length` items: nothing drawn yet (call `showEnd` or `layout`).
  reset(length) {
    this.detach();
    this.cache.clear();
    this.heights = new Array(length);
    this.sum = 0;
    this.count = 0;
    this.length = length;
    this.lo = this.hi = length;
    this.list.prepend(this.top, this.bottom);
    this.sizeSpacers();
  }

  // Items from `from` on changed and the list now has `length` items: their nodes go.
  splice(from, length) {
    this.ensureMounted();
    for (const [i] of this.cache) if (i >= from) this.cache.delete(i);
    const keep = Math.max(0, Math.min(from, this.hi) - this.lo);
    if (this.lo >= from) {
      for (const node of this.drawn) node.remove();
      this.drawn = [];
      this.lo = this.hi = Math.min(from, length);
    } else if (this.hi > from) {
      for (const node of this.drawn.slice(keep)) node.remove();
      this.drawn = this.drawn.slice(0, keep);
      this.hi = from;
    }
    for (let i = from; i < this.heights.length; i++) this.forget(i);
    this.heights.length = length;
    this.length = length;
    if (this.hi > length) this.hi = length;
    if (this.lo > length) this.lo = length;
    this.sizeSpacers();
  }

  // Item i is drawn anew (its data or its state changed).
  refresh(i) {
    this.cache.delete(i);
    if (i < this.lo || i >= this.hi) return;
    const old = this.drawn[i - this.lo];
    const node = this.build(i);
    this.drawn[i - this.lo] = node;
    if (old.isConnected) old.replaceWith(node);
  }

  // Every item is drawn anew when shown (what they show depends on changed settings).
  refreshAll() {
    this.cache.clear();
    for (let i = this.lo; i < this.hi; i++) this.refresh(i);
  }

  // The drawn node of item i, or null when it is off screen.
  node(i) {
    return i >= this.lo && i < this.hi ? this.drawn[i - this.lo] : null;
  }

  // Scroll item i to a third of the viewport and draw around it; its node (a placeholder while
  // its data is not loaded), or null.
  reveal(i) {
    if (i < 0 || i >= this.length) return null;
    this.ensureMounted();
    const node = this.node(i);
    if (!node || node.dataset.placeholder) {
      const box = this.scroller;
      box.scrollTop = Math.max(0, this.listTop() + this.position(i) - box.clientHeight / 3);
      this.layout();
    }
    return this.node(i);
  }

  // Data arrived for items that were placeholders: draw them.
  loaded() {
    if (this.drawn.some((node) => node.dataset.placeholder)) this.layout({ redraw: true });
  }

  // -- drawing ------------------------------------------------------------------------------

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const redraw = this.redrawNext;
      this.redrawNext = false;
      this.layout({ redraw });
    });
  }

  // Draw the end of the list and scroll to it.
  showEnd() {
    this.layout({ end: true });
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  // Draw what the scroll position shows (with `end`: the end of the list), keeping the first
  // visible item where it is on screen.
  layout({ end = false, redraw = false } = {}) {
    if (!this.length) {
      this.detach();
      return;
    }
    this.ensureMounted();
    end = end || this.stuck();
    for (let pass = 0; pass < 3; pass++) {
      this.measure();
      const want = this.wanted(end);
      const covered = end
        ? this.hi === this.length && want.nearLo >= this.lo
        : want.nearLo >= this.lo && want.nearHi <= this.hi && this.hi > this.lo;
      if (covered && !redraw) return;
      redraw = false;
      const anchor = end ? null : this.anchor(want.visLo);
      this.draw(want.lo, want.hi);
      this.measure();
      this.est = this.estimate();
      this.sizeSpacers();
      if (anchor) this.restore(anchor);
      else this.scroller.scrollTop = this.scroller.scrollHeight;
    }
  }

  // The ranges for the current scroll position: what to draw, what is visible, and what must
  // already be drawn for the window to stay put (half a viewport beyond the visible part).
  wanted(end) {
    if (this.length <= SMALL) return { lo: 0, hi: this.length, visLo: 0, nearLo: 0, nearHi: this.length };
    const box = this.scroller;
    const view = box.clientHeight || 800;
    const total = this.position(this.length);
    const viewTop = end ? Math.max(0, total - view) : box.scrollTop - this.listTop();
    const viewBottom = viewTop + view;
    const lo = this.firstEndingAfter(viewTop - view * OVERSCAN);
    const visLo = this.firstEndingAfter(viewTop);
    return {
      lo,
      hi: Math.max(this.firstStartingAt(viewBottom + view * OVERSCAN), lo + 1),
      visLo,
      nearLo: this.firstEndingAfter(viewTop - view / 2),
      nearHi: Math.max(this.firstStartingAt(viewBottom + view / 2), visLo + 1),
    };
  }

  // The first item whose bottom is below y (the last item when none is).
  firstEndingAfter(y) {
    let pos = 0;
    for (let i = 0; i < this.length; i++) {
      pos += this.slot(i);
      if (pos > y) return i;
    }
    return Math.max(0, this.length - 1);
  }

  // The first item whose top is at or below y (the length when none is).
  firstStartingAt(y) {
    let pos = 0;
    for (let i = 0; i < this.length; i++) {
      if (pos >= y) return i;
      pos += this.slot(i);
    }
    return this.length;
  }

  draw(lo, hi) {
    const nodes = [];
    for (let i = lo; i < hi; i++) nodes.push(this.cache.get(i) || this.build(i));
    const keep = new Set(nodes);
    for (const node of this.drawn) if (!keep.has(node)) node.remove();
    let ref = this.top.nextSibling;
    for (const node of nodes) {
      if (node === ref) ref = ref.nextSibling;
      else this.list.insertBefore(node, ref === null || ref === undefined ? this.bottom : ref);
    }
    this.lo = lo;
    this.hi = hi;
    this.drawn = nodes;
    this.trimCache();
  }

  build(i) {
    let node = this.render(i);
    if (!node) {
      node = document.createElement("div");
      node.className = "window-placeholder";
      node.dataset.placeholder = "1";
      node.setAttribute("aria-hidden", "true");
      node.style.height = `${Math.max(1, this.slot(i) - this.gap())}px`;
      this.missing(i);
      return node; // never cached: drawn again once the data is there
    }
    this.cache.set(i, node);
    return node;
  }

  trimCache() {
    if (this.cache.size <= MAX_CACHED + this.drawn.length) return;
    for (const [i, node] of this.cache) {
      if (this.cache.size <= MAX_CACHED + this.drawn.length) break;
      if (i >= this.lo && i < this.hi) continue;
      if (node.querySelector(".edit-box")) continue;
      this.cache.delete(i);
    }
  }

  // -- measuring ----------------------------------------------------------------------------

  gap() {
    return parseFloat(getComputedStyle(this.list).rowGap) || 0;
  }

  estimate() {
    return this.count ? this.sum / this.count : DEFAULT_HEIGHT;
  }

  slot(i) {
    return this.heights[i] ?? this.est;
  }

  position(index) {
    let pos = 0;
    for (let i = 0; i < index; i++) pos += this.slot(i);
    return pos;
  }

  forget(i) {
    if (this.heights[i] !== undefined) {
      this.sum -= this.heights[i];
      this.count -= 1;
      this.heights[i] = undefined;
    }
  }

  forgetHeights() {
    this.heights = new Array(this.length);
    this.sum = 0;
    this.count = 0;
  }

  measure() {
    if (!this.drawn.length) return;
    const gap = this.gap();
    for (let k = 0; k < this.drawn.length; k++) {
      const node = this.drawn[k];
      if (node.dataset.placeholder || !node.isConnected) continue;
      const i = this.lo + k;
      const h = node.getBoundingClientRect().height + gap;
      this.forget(i);
      this.heights[i] = h;
      this.sum += h;
      this.count += 1;
    }
  }

  listTop() {
    const box = this.scroller;
    return this.list.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
  }

  sizeSpacers() {
    const gap = this.gap();
    for (let k = 0; k < this.drawn.length; k++) {
      const node = this.drawn[k];
      if (node.dataset.placeholder) node.style.height = `${Math.max(1, this.slot(this.lo + k) - gap)}px`;
    }
    const above = this.position(this.lo);
    let below = 0;
    for (let i = this.hi; i < this.length; i++) below += this.slot(i);
    // each spacer is a flex item too: the gap after it is part of the slots it stands for
    this.top.hidden = above <= 0;
    this.top.style.height = `${Math.max(0, above - gap)}px`;
    this.bottom.hidden = below <= 0;
    this.bottom.style.height = `${Math.max(0, below - gap)}px`;
  }

  // Where item i is on screen now (drawn: measured; else from the heights).
  anchor(i) {
    const box = this.scroller;
    const node = this.node(i);
    const offset = node
      ? node.getBoundingClientRect().top - box.getBoundingClientRect().top
      : this.listTop() + this.position(i) - box.scrollTop;
    return { i, offset };
  }

  restore({ i, offset }) {
    const box = this.scroller;
    const node = this.node(i);
    if (!node) return;
    const now = node.getBoundingClientRect().top - box.getBoundingClientRect().top;
    if (Math.abs(now - offset) >= 1) box.scrollTop += now - offset;
  }

  // -- mounting -----------------------------------------------------------------------------

  ensureMounted() {
    if (!this.top.isConnected) this.list.prepend(this.top);
    if (!this.bottom.isConnected) this.top.after(...this.drawn, this.bottom);
  }

  detach() {
    for (const node of this.drawn) node.remove();
    this.drawn = [];
    this.lo = this.hi = this.length;
    this.top.remove();
    this.bottom.remove();
  }
}
