"use strict";
// The seqcheck trace viewer. Every string from the trace is written with textContent or as an
// SVG text node: nothing from the trace is ever parsed as markup.
(function () {
  const data = JSON.parse(document.getElementById("trace-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const LANE = 220, ROW = 34, TOP = 30, LEFT = 420;
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
  const rowY = (i) => TOP + i * ROW;

  function drawChart() {
    const n = data.members.length, height = rowY(data.steps.length + 1) + 10;
    const svg = el("svg", {width: LEFT + n * LANE + 20, height: height, id: "chart-svg"});
    data.steps.forEach((step, k) => {
      const g = el("g", {"class": "step-row", "data-step": step.index});
      g.appendChild(el("rect", {"class": "step-band", x: 0, y: rowY(k + 1) - ROW / 2, width: LEFT + n * LANE,
                                height: ROW}));
      const label = String(step.index) + ". " + step.title;
      const text = el("text", {"class": "step-title", x: 4, y: rowY(k + 1) + 4},
                      label.length > 62 ? label.slice(0, 61) + "\u2026" : label);
      text.appendChild(el("title", {}, label));
      g.appendChild(text);
      g.addEventListener("click", () => select(step.index));
      svg.appendChild(g);
    });
    data.members.forEach((name, m) => {
      svg.appendChild(el("text", {"class": "lane-name", x: laneX(m) - 10, y: 18}, name));
      svg.appendChild(el("line", {"class": "lane", x1: laneX(m), y1: TOP, x2: laneX(m), y2: height}));
    });
    data.steps.forEach((step, k) => {
      const marks = {};
      step.notes.forEach((note) => {
        const count = marks[note.member] = (marks[note.member] || 0) + 1;
        const c = el("circle", {"class": "mark", cx: laneX(note.member), cy: rowY(k + 1) - 8 + 4 * count, r: 3});
        c.appendChild(el("title", {}, note.text));
        svg.appendChild(c);
      });
      step.arrows.forEach((a) => {
        const sentRow = data.steps.findIndex((s) => s.index === a.sent);
        const x1 = laneX(a.src), y1 = rowY((sentRow < 0 ? k : sentRow) + 1);
        let x2 = laneX(a.dst), y2 = rowY(k + 1);
        if (a.lost) x2 = x1 + (x2 - x1) * 0.8;
        const cls = "packet" + (a.lost ? " lost" : "") + (a.duplicate ? " duplicate" : "");
        const line = el("line", {"class": cls, x1: x1, y1: y1, x2: x2, y2: y2, "data-step": step.index,
                                 "data-sent": a.sent, "marker-end": a.lost ? "" : "url(#head)"});
        line.appendChild(el("title", {}, a.label));
        svg.appendChild(line);
        if (a.lost) svg.appendChild(el("text", {"class": "cross", x: x2 - 5, y: y2 + 5}, "\u2716"));
        svg.appendChild(el("text", {"class": "packet-label", x: (x1 + x2) / 2 - 40, y: (y1 + y2) / 2 - 3},
                           a.label.length > 40 ? a.label.slice(0, 39) + "\u2026" : a.label));
      });
    });
    const defs = el("defs"), marker = el("marker", {id: "head", markerWidth: 8, markerHeight: 8, refX: 8,
                                                    refY: 4, orient: "auto"});
    marker.appendChild(el("path", {d: "M0,0 L8,4 L0,8 z", fill: "#1d4ed8"}));
    defs.appendChild(marker);
    svg.insertBefore(defs, svg.firstChild);
    document.getElementById("chart").appendChild(svg);
  }

  function select(index) {
    selected = Math.max(0, Math.min(data.steps.length, index));
    document.querySelectorAll(".step-row").forEach((g) =>
      g.classList.toggle("selected", Number(g.getAttribute("data-step")) === selected));
    const step = data.steps[selected - 1];
    document.getElementById("step-title").textContent =
      step ? "After step " + step.index + ": " + step.title : "Initial state";
    const states = document.getElementById("states");
    states.replaceChildren();
    const before = data.states[Math.max(0, selected - 1)], after = data.states[selected];
    after.forEach((member, m) => {
      const box = html("div", undefined, "member-state");
      box.appendChild(html("h4", member.member));
      const table = html("table");
      member.fields.forEach(([name, value], f) => {
        const changed = selected > 0 && before[m].fields[f] && before[m].fields[f][1] !== value;
        const tr = html("tr", undefined, changed ? "changed" : "");
        tr.appendChild(html("td", name));
        tr.appendChild(html("td", value));
        table.appendChild(tr);
      });
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
