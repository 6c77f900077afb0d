"use strict";
// The seqcheck trace viewer. Every string from the trace is written with textContent or as an
// SVG text node: nothing from the trace is ever parsed as markup.
//
// Layout (deterministic: it depends only on the trace and the font's character width):
// - each step is a row as tall as it needs: its title wrapped in full in the left column, and the
//   labels of the arrows that arrive at it stacked above the arrival line, beside the arrowhead;
// - an arrow's label is wrapped in full to the room between the arrow's lanes (a loopback's, beside
//   its loop) and put on the lowest line of its row where it meets no label placed before it
//   (an interval-overlap pass over the row's lines), so no two texts of the chart ever overlap;
// - a packet a member sends itself (a multicast's own copy) is a loop out of its lane and back.
(function () {
  const data = JSON.parse(document.getElementById("trace-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const LANE = 260, TOP = 34, LEFT = 340, PAD = 6, TITLE_LINE = 15, LABEL_LINE = 13, LOOP = 26, ROW = 34;
  let selected = 0;

  function el(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function html(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }
  const laneX = (m) => LEFT + m * LANE + LANE / 2;

  // What step ``k`` (1-based) did, per note: the chart's ``»`` and ``->`` notes as they are, and instead of
  // its ``·`` lines (the text chart's wording of changed fields) the panel's named fields that changed.
  function stepNotes(k) {
    const step = data.steps[k - 1];
    const notes = step.notes.filter((note) => !note.text.startsWith("\u00b7 "));
    const before = data.states[k - 1], after = data.states[k];
    after.forEach((member, i) => {
      const lane = data.members.indexOf(member.member);
      const old = new Map(before[i].fields), now = new Map(member.fields);
      now.forEach((value, name) => {
        if (old.get(name) !== value) {
          notes.push({member: lane, text: "\u00b7 " + name + ": " + (old.has(name) ? old.get(name) : "none") +
                      " -> " + value});
        }
      });
      old.forEach((value, name) => {
        if (!now.has(name)) notes.push({member: lane, text: "\u00b7 " + name + ": " + value + " -> removed"});
      });
    });
    return notes;
  }

  // The width of one character of a text class (the chart's texts are monospace).
  function charWidth(svg, cls) {
    const probe = el("text", {"class": cls, x: 0, y: -100}, "M".repeat(40));
    svg.appendChild(probe);
    const width = probe.getComputedTextLength() / 40;
    svg.removeChild(probe);
    return width > 0 ? width : 7;
  }

  // ``text`` in lines of at most ``room`` characters, broken after a space or a comma where it can be.
  function wrap(text, room) {
    room = Math.max(8, Math.floor(room));
    const lines = [];
    let rest = text;
    while (rest.length > room) {
      let cut = Math.max(rest.lastIndexOf(" ", room), rest.lastIndexOf(",", room - 1) + 1);
      if (cut <= room / 3) cut = room;
      lines.push(rest.slice(0, cut).trimEnd());
      rest = "  " + rest.slice(cut).trimStart();
    }
    lines.push(rest);
    return lines;
  }

  // Where an arrow's label may go: [x0, x1] between its lanes (a lost arrow's: short of the cross),
  // a loopback's beside its loop.
  function labelRoom(a) {
    const xs = laneX(a.src), xd = laneX(a.dst);
    if (a.src === a.dst) return [xs + LOOP + 8, xs + LANE - 12];
    let end = a.lost ? xs + (xd - xs) * 0.8 : xd;
    const left = Math.min(xs, end), right = Math.max(xs, end);
    return [left + (a.lost && end === left ? 16 : 8), right - (a.lost && end === right ? 16 : 8)];
  }

  // Put every label of a row on the lowest free lines: a label takes ``lines`` lines of [x0, x1] and may
  // share a line only with labels whose x-intervals it does not meet. Returns the lines used.
  function placeLabels(labels) {
    const placed = [];
    let used = 0;
    for (const label of labels) {
      const n = label.lines.length;
      let slot = 0;
      const clash = (s) => placed.some((p) => p.x0 < label.x1 && label.x0 < p.x1 && p.slot < s + n && s < p.slot + p.n);
      while (clash(slot)) slot += 1;
      label.slot = slot;
      label.n = n;
      placed.push(label);
      used = Math.max(used, slot + n);
    }
    return used;
  }

  function layout(svg) {
    const titleChar = charWidth(svg, "step-title"), labelChar = charWidth(svg, "packet-label");
    let top = TOP;
    return data.steps.map((step) => {
      const title = wrap(String(step.index) + ". " + step.title, (LEFT - 12) / titleChar);
      const labels = step.arrows.map((a) => {
        const [x0, x1] = labelRoom(a);
        const lines = wrap(a.label, (x1 - x0) / labelChar);
        const width = Math.max(...lines.map((l) => l.length)) * labelChar;
        const toLeft = a.src !== a.dst && laneX(a.dst) < laneX(a.src);
        // beside the arrowhead: a rightward arrow's label ends at its right end, a leftward one's starts at
        // its left end (a loop's starts beside the loop)
        return toLeft || a.src === a.dst ? {arrow: a, lines: lines, x0: x0, x1: x0 + width}
          : {arrow: a, lines: lines, x0: x1 - width, x1: x1};
      });
      const slots = placeLabels(labels);
      const height = Math.max(ROW, title.length * TITLE_LINE + 2 * PAD, slots * LABEL_LINE + 2 * PAD + 10);
      const row = {step: step, top: top, height: height, y: top + height - PAD - 2, title: title, labels: labels};
      top += height;
      return row;
    });
  }

  function drawRow(svg, row, width) {
    const g = el("g", {"class": "step-row", "data-step": row.step.index});
    g.appendChild(el("rect", {"class": "step-band", x: 0, y: row.top, width: width, height: row.height}));
    const text = el("text", {"class": "step-title", x: 4, y: row.top + PAD + 10});
    row.title.forEach((line, i) => text.appendChild(el("tspan", {x: 4, dy: i ? TITLE_LINE : 0}, line)));
    text.appendChild(el("title", {}, String(row.step.index) + ". " + row.step.title));
    g.appendChild(text);
    g.addEventListener("click", () => select(row.step.index));
    svg.appendChild(g);
  }

  function drawArrow(svg, rows, row, label) {
    const a = label.arrow;
    const sent = rows.find((r) => r.step.index === a.sent);
    const x1 = laneX(a.src), y1 = sent && sent !== row ? sent.y : row.top + PAD;
    let x2 = laneX(a.dst);
    const y2 = row.y;
    if (a.lost && a.src !== a.dst) x2 = x1 + (x2 - x1) * 0.8;
    const cls = "packet" + (a.lost ? " lost" : "") + (a.duplicate ? " duplicate" : "") +
      (a.src === a.dst ? " loopback" : "");
    const attrs = {"class": cls, "data-step": row.step.index, "data-sent": a.sent,
                   "marker-end": a.lost ? "" : "url(#head)"};
    let shape;
    if (a.src === a.dst) {
      const bend = x1 + LOOP * 1.5, end = a.lost ? x1 + LOOP * 0.6 : x1;
      shape = el("path", Object.assign(attrs, {d: `M${x1},${y1} C${bend},${y1} ${bend},${y2} ${end},${y2}`}));
      x2 = end;
    } else {
      shape = el("line", Object.assign(attrs, {x1: x1, y1: y1, x2: x2, y2: y2}));
    }
    shape.appendChild(el("title", {}, a.label));
    svg.appendChild(shape);
    if (a.lost) svg.appendChild(el("text", {"class": "cross", x: x2 - 5, y: y2 + 5}, "\u2716"));
    const base = row.y - 5 - (label.slot + label.n - 1) * LABEL_LINE;
    const text = el("text", {"class": "packet-label", x: label.x0, y: base, "data-step": row.step.index});
    label.lines.forEach((line, i) => text.appendChild(el("tspan", {x: label.x0, dy: i ? LABEL_LINE : 0}, line)));
    text.appendChild(el("title", {}, a.label));
    svg.appendChild(text);
  }

  function drawChart() {
    const n = data.members.length, width = LEFT + n * LANE;
    const svg = el("svg", {width: width + 20, height: 100, id: "chart-svg"});
    document.getElementById("chart").appendChild(svg);
    const rows = layout(svg);
    const height = (rows.length ? rows[rows.length - 1].top + rows[rows.length - 1].height : TOP) + 10;
    svg.setAttribute("height", height);
    rows.forEach((row) => drawRow(svg, row, width));
    data.members.forEach((name, m) => {
      svg.appendChild(el("text", {"class": "lane-name", x: laneX(m), y: 20, "text-anchor": "middle"}, name));
      svg.appendChild(el("line", {"class": "lane", x1: laneX(m), y1: TOP - 6, x2: laneX(m), y2: height}));
    });
    rows.forEach((row) => {
      // a dot per note on its member's lane, the fields a member's state changed as one dot (hover: the text)
      const marks = [], changed = {};
      stepNotes(row.step.index).forEach((note) => {
        if (!note.text.startsWith("\u00b7 ")) marks.push(note);
        else if (changed[note.member]) changed[note.member].text += "\n" + note.text;
        else marks.push(changed[note.member] = {member: note.member, text: note.text, fields: true});
      });
      const count = {};
      marks.forEach((note) => {
        const k = count[note.member] = (count[note.member] || 0) + 1;
        const gap = Math.min(7, (row.height - 8) / Math.max(1, marks.length));
        const c = el("circle", {"class": note.fields ? "mark fields" : "mark", cx: laneX(note.member),
                                cy: row.y - gap * (k - 1), r: 3});
        c.appendChild(el("title", {}, note.text));
        svg.appendChild(c);
      });
      row.labels.forEach((label) => drawArrow(svg, rows, row, label));
    });
    const defs = el("defs"), marker = el("marker", {id: "head", markerWidth: 8, markerHeight: 8, refX: 8,
                                                    refY: 4, orient: "auto"});
    marker.appendChild(el("path", {d: "M0,0 L8,4 L0,8 z", fill: "#1d4ed8"}));
    defs.appendChild(marker);
    svg.insertBefore(defs, svg.firstChild);
  }

  function showNotes(step) {
    const list = document.getElementById("notes");
    list.replaceChildren();
    const lines = step ? [...step.arrows.map((a) => a.label),
                          ...stepNotes(step.index).map((note) => data.members[note.member] + " " + note.text)] : [];
    lines.forEach((line) => list.appendChild(html("li", line)));
    if (!lines.length) list.appendChild(html("li", "nothing"));
  }

  function select(index) {
    selected = Math.max(0, Math.min(data.steps.length, index));
    document.querySelectorAll(".step-row").forEach((g) =>
      g.classList.toggle("selected", Number(g.getAttribute("data-step")) === selected));
    const step = data.steps[selected - 1];
    document.getElementById("step-title").textContent =
      step ? "After step " + step.index + ": " + step.title : "Initial state";
    showNotes(step);
    const states = document.getElementById("states");
    states.replaceChildren();
    const before = data.states[Math.max(0, selected - 1)], after = data.states[selected];
    after.forEach((member, m) => {
      const box = html("div", undefined, "member-state");
      box.appendChild(html("h4", member.member));
      const old = new Map(before[m].fields.map(([name, value]) => [name, value]));
      const table = html("table");
      member.fields.forEach(([name, value]) => {
        const changed = selected > 0 && old.get(name) !== value;
        const tr = html("tr", undefined, changed ? "changed" : "");
        tr.appendChild(html("td", name));
        tr.appendChild(html("td", value));
        table.appendChild(tr);
      });
      const now = new Set(member.fields.map(([name]) => name));
      if (selected > 0) {
        old.forEach((value, name) => {
          if (now.has(name)) return;
          const tr = html("tr", undefined, "changed removed");
          tr.appendChild(html("td", name));
          tr.appendChild(html("td", "removed (was " + value + ")"));
          table.appendChild(tr);
        });
      }
      box.appendChild(table);
      states.appendChild(box);
    });
    const flight = document.getElementById("in-flight");
    flight.replaceChildren();
    data.in_flight[selected].forEach((p) => flight.appendChild(html("li", p)));
    if (!data.in_flight[selected].length) flight.appendChild(html("li", "none"));
  }

  document.getElementById("title").textContent = data.title;
  document.getElementById("summary").textContent = data.header.join("\n");
  document.getElementById("footer").textContent = data.footer.join("\n");
  drawChart();
  document.addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown" || e.key === "ArrowRight") { select(selected + 1); e.preventDefault(); }
    if (e.key === "ArrowUp" || e.key === "ArrowLeft") { select(selected - 1); e.preventDefault(); }
  });
  select(data.steps.length);
})();
