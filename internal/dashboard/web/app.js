// Copyright 2026 The serin authors. Licensed under the Apache License, Version 2.0.
//
// The dashboard's two pages: all Canaries with the CanaryGroups, and one
// Canary. Both follow the server's event stream (Server-Sent Events); the
// server derives every value, this script lays them out.
"use strict";

(function () {
  var token = metaContent("serin-token");
  var main = document.getElementById("main");
  var announcer = document.getElementById("announcer");
  var route = location.pathname.match(/^\/canaries\/([^/]+)\/([^/]+)\/?$/);

  setUpTheme();
  setUpShortcuts();
  if (route) {
    canaryPage(decodeURIComponent(route[1]), decodeURIComponent(route[2]));
  } else {
    listPage();
  }

  // ---- shared -------------------------------------------------------------

  function metaContent(name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute("content") : "";
  }

  function h(tag, attrs, children) {
    var node = document.createElement(tag);
    for (var k in attrs || {}) {
      if (attrs[k] === undefined || attrs[k] === null || attrs[k] === false) continue;
      if (k === "text") node.textContent = attrs[k];
      else if (k === "className") node.className = attrs[k];
      else node.setAttribute(k, attrs[k] === true ? "" : attrs[k]);
    }
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  function announce(text) {
    // A new node each time, so that screen readers read a repeated text too.
    announcer.appendChild(h("p", { text: text }));
    while (announcer.childNodes.length > 5) announcer.removeChild(announcer.firstChild);
  }

  function connect(url, handlers) {
    var status = document.getElementById("connection");
    var setState = function (state, text) { status.dataset.state = state; status.textContent = text; };
    var source = new EventSource(url);
    source.onopen = function () { setState("live", "live"); };
    source.onerror = function () {
      if (source.readyState === EventSource.CLOSED) setState("down", "disconnected: reload the page");
      else setState("connecting", "reconnecting…");
    };
    source.addEventListener("problem", function (e) { showProblem(JSON.parse(e.data).error); });
    Object.keys(handlers).forEach(function (name) {
      source.addEventListener(name, function (e) { handlers[name](JSON.parse(e.data)); });
    });
    return source;
  }

  function showProblem(message) {
    var box = document.getElementById("problem");
    box.textContent = "";
    box.hidden = !message;
    if (message) box.appendChild(h("p", {}, [h("strong", { text: "The dashboard cannot show the Canaries. " }), message]));
  }

  var tones = {
    Succeeded: "ok", Initialized: "ok", Failed: "bad", Halted: "bad",
    Progressing: "info", Promoting: "info", Finalising: "info",
    Waiting: "warn", WaitingPromotion: "warn", Initializing: "idle",
    // the phases of a stage of a wave that a Canary's phase does not have
    Soaking: "warn", Opened: "info", Merged: "info", Stopped: "bad", Error: "bad",
  };

  function phaseBadge(phase, id) {
    return h("span", { className: "phase", "data-tone": tones[phase] || "idle", id: id, text: phase || "none yet" });
  }

  function shortHashes(s) {
    return (s || "").replace(/[0-9a-f]{9,}/g, function (hex) { return hex.slice(0, 8); });
  }

  function statusText(status) {
    return h("span", { className: "status-" + String(status).toLowerCase(), text: status });
  }

  function time(iso) {
    if (!iso) return "—";
    var d = new Date(iso);
    return h("time", { datetime: iso, title: d.toString(), text: d.toLocaleString() });
  }

  function canaryURL(c) {
    return "/canaries/" + encodeURIComponent(c.namespace) + "/" + encodeURIComponent(c.name);
  }

  function groupAnchor(namespace, name) {
    return "group-" + namespace + "/" + name;
  }

  // groupState says what a member holds, waits for, or was rolled back by.
  function groupState(st) {
    if (!st) return "";
    var parts = [];
    if (st.holding === "Step") parts.push("holds its step for the others");
    if (st.holding === "Promotion") parts.push("holds its promotion for the others");
    if (st.waitingFor && st.waitingFor.length) parts.push("waits for " + st.waitingFor.join(", "));
    if (st.failedBy) parts.push("rolled back: " + st.failedBy + " failed");
    return parts.join("; ");
  }

  function revertCell(revert) {
    if (!revert) return "—";
    if (revert.pullRequestURL) {
      return h("a", { href: revert.pullRequestURL, rel: "noopener noreferrer", target: "_blank",
        text: "pull request" + (revert.state ? " (" + revert.state + ")" : "") });
    }
    return revert.state || "—";
  }

  // ---- theme, help and shortcuts --------------------------------------------

  function effectiveTheme() {
    var chosen = document.documentElement.dataset.theme;
    if (chosen) return chosen;
    return window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }

  function setUpTheme() {
    var button = document.getElementById("theme-toggle");
    var sync = function () { button.setAttribute("aria-pressed", String(effectiveTheme() === "dark")); };
    sync();
    window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", sync);
    button.addEventListener("click", function () {
      var next = effectiveTheme() === "dark" ? "light" : "dark";
      document.documentElement.dataset.theme = next;
      try { localStorage.setItem("serin-theme", next); } catch (e) { /* not kept */ }
      sync();
      announce(next === "dark" ? "Dark theme" : "Light theme");
    });
    document.getElementById("help-button").addEventListener("click", function () {
      document.getElementById("help").showModal();
    });
  }

  function setUpShortcuts() {
    document.addEventListener("keydown", function (e) {
      if (e.ctrlKey || e.metaKey || e.altKey || document.querySelector("dialog[open]")) return;
      var target = e.target;
      var typing = target.closest && target.closest("input, textarea, select, [contenteditable]");
      if (typing) {
        if (e.key === "Escape" && target.id === "filter") {
          target.value = "";
          target.dispatchEvent(new Event("input"));
        }
        return;
      }
      var filter = document.getElementById("filter");
      switch (e.key) {
        case "/":
          if (filter) { e.preventDefault(); filter.focus(); }
          break;
        case "?":
          e.preventDefault();
          document.getElementById("help").showModal();
          break;
        case "t":
          document.getElementById("theme-toggle").click();
          break;
        case "u":
          if (route) location.href = "/";
          break;
        case "j":
        case "k":
          moveRowFocus(e.key === "j" ? 1 : -1);
          break;
      }
    });
  }

  function moveRowFocus(delta) {
    var links = Array.prototype.slice.call(document.querySelectorAll("#rows tr:not([hidden]) a.canary-link"));
    if (!links.length) return;
    var i = links.indexOf(document.activeElement);
    i = i < 0 ? (delta > 0 ? 0 : links.length - 1) : Math.min(links.length - 1, Math.max(0, i + delta));
    links[i].focus();
  }

  // ---- all Canaries ---------------------------------------------------------

  function listPage() {
    main.textContent = "";
    main.appendChild(document.getElementById("list-view").content.cloneNode(true));
    var rows = document.getElementById("rows");
    var filter = document.getElementById("filter");
    var canaries = new Map();
    var loaded = false;
    var groups = new Map();
    var drawnGroups = new Map(); // the JSON each group's card was drawn from
    var groupProblem = "";
    var scrolledToGroup = false;

    filter.addEventListener("input", applyFilter);

    connect("/api/events", {
      snapshot: function (data) {
        canaries.clear();
        data.canaries.forEach(function (c) { canaries.set(key(c), c); });
        loaded = true;
        render(null);
        groups.clear();
        (data.groups || []).forEach(function (g) { groups.set(key(g), g); });
        renderGroups();
      },
      canary: function (c) {
        var before = canaries.get(key(c));
        canaries.set(key(c), c);
        render(key(c));
        if (!before) announce(c.name + " in " + c.namespace + " appeared: " + (c.phase || "no phase yet"));
        else if (before.phase !== c.phase || before.weight !== c.weight) {
          announce(c.name + " in " + c.namespace + ": " + (c.phase || "no phase") + ", weight " + c.weight + "%");
        }
      },
      deleted: function (c) {
        canaries.delete(key(c));
        render(null);
        announce(c.name + " in " + c.namespace + " was deleted");
      },
      group: function (g) {
        var before = groups.get(key(g));
        groups.set(key(g), g);
        renderGroups();
        if (before && before.phase !== g.phase) {
          announce("group " + g.name + " in " + g.namespace + ": " + (g.phase || "no phase"));
        }
      },
      "group-deleted": function (g) {
        groups.delete(key(g));
        renderGroups();
        announce("group " + g.name + " in " + g.namespace + " was deleted");
      },
      "group-problem": function (p) {
        groupProblem = p.error;
        renderGroups();
      },
    });

    function key(c) { return c.namespace + "/" + c.name; }

    function render(changed) {
      var focused = document.activeElement && document.activeElement.closest("tr[data-key]");
      var focusKey = focused ? focused.dataset.key : null;
      rows.textContent = "";
      Array.from(canaries.values()).sort(function (a, b) {
        return a.namespace === b.namespace ? a.name.localeCompare(b.name) : a.namespace.localeCompare(b.namespace);
      }).forEach(function (c) {
        var tr = row(c);
        if (key(c) === changed) tr.classList.add("flash");
        rows.appendChild(tr);
      });
      if (focusKey) {
        var link = rows.querySelector('tr[data-key="' + CSS.escape(focusKey) + '"] a.canary-link');
        if (link) link.focus();
      }
      document.getElementById("empty").hidden = !loaded || canaries.size > 0;
      applyFilter();
    }

    function row(c) {
      var name = h("td", {}, [h("a", { href: canaryURL(c), className: "canary-link", text: c.name })]);
      if (c.suspended) name.appendChild(h("span", { className: "phase", "data-tone": "warn", text: "suspended" }));
      return h("tr", { "data-key": key(c), "data-phase": c.phase, "data-weight": c.weight }, [
        name,
        h("td", { text: c.namespace }),
        h("td", {}, [phaseBadge(c.phase)]),
        h("td", { className: "weight-cell" }, [h("span", { className: "weight" }, [
          h("progress", { max: "100", value: String(c.weight), "aria-hidden": "true" }),
          h("span", { className: "weight-value", text: c.weight + "%" }),
        ])]),
        h("td", {}, [h("code", { title: c.revision, text: shortHashes(c.revision) || "—" })]),
        h("td", {}, [statusText(c.ready)]),
        h("td", { className: "message", text: shortHashes(c.message) }),
        h("td", {}, [revertCell(c.revert)]),
      ]);
    }

    // renderGroups draws a card for each group, again only for the groups
    // whose data changed, so that focus and open details survive.
    function renderGroups() {
      var problem = document.getElementById("groups-problem");
      problem.textContent = "";
      problem.hidden = !groupProblem;
      if (groupProblem) problem.appendChild(h("p", {}, [h("strong", { text: "The dashboard cannot show the CanaryGroups. " }), groupProblem]));
      document.getElementById("groups").hidden = !groupProblem && groups.size === 0;
      var list = document.getElementById("group-list");
      Array.prototype.slice.call(list.children).forEach(function (card) {
        if (!groups.has(card.dataset.key)) {
          list.removeChild(card);
          drawnGroups.delete(card.dataset.key);
        }
      });
      Array.from(groups.keys()).sort().forEach(function (k, i) {
        var g = groups.get(k), json = JSON.stringify(g);
        var card = list.querySelector('article[data-key="' + CSS.escape(k) + '"]');
        if (!card || drawnGroups.get(k) !== json) {
          var fresh = groupCard(g);
          if (card) {
            card.querySelectorAll("details[open]").forEach(function (d) {
              var same = fresh.querySelector('details[data-id="' + CSS.escape(d.dataset.id) + '"]');
              if (same) same.open = true;
            });
            card.replaceWith(fresh);
          }
          card = fresh;
          drawnGroups.set(k, json);
        }
        if (list.children[i] !== card) list.insertBefore(card, list.children[i] || null);
      });
      // A link to a group (from a Canary's page) finds its card once drawn.
      if (!scrolledToGroup && location.hash.indexOf("#group-") === 0) {
        var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
        if (target) {
          scrolledToGroup = true;
          target.scrollIntoView();
        }
      }
    }

    function groupCard(g) {
      var titleId = groupAnchor(g.namespace, g.name) + "-title";
      var card = h("article", { className: "card group", id: groupAnchor(g.namespace, g.name), "data-key": key(g),
        "data-phase": g.phase, "aria-labelledby": titleId }, [
        h("div", { className: "record-head" }, [
          h("h3", { id: titleId, text: g.name }),
          phaseBadge(g.phase),
          h("span", { className: "when", text: "namespace " + g.namespace + " · members " + g.members.join(", ") }),
        ]),
      ]);
      var r = g.release;
      if (!r) {
        card.appendChild(h("p", { className: "hint", text: "No release yet: no member has changed since the group was created." }));
        return card;
      }
      var facts = h("dl", { className: "facts" });
      var add = function (label, value) { facts.appendChild(h("div", {}, [h("dt", { text: label }), h("dd", {}, [value])])); };
      add("Release", h("code", { text: shortHashes(r.revision), title: r.revision }));
      add("Release phase", phaseBadge(r.phase));
      add("Started", time(r.startedAt));
      add("Finished", r.finishedAt ? time(r.finishedAt) : "under way");
      add("Ready", h("span", { title: g.message }, [statusText(g.ready), g.message ? ": " + shortHashes(g.message) : ""]));
      card.appendChild(facts);
      if (r.decidedBy || r.message || r.revertURL) {
        card.appendChild(h("p", { className: "verdict" }, [
          r.decidedBy ? h("span", {}, ["Decided by ", h("strong", { text: r.decidedBy }), r.message ? ": " : ""]) : null,
          r.message ? shortHashes(r.message) : null,
          r.revertURL ? h("span", {}, [" · revert: ", h("a", { href: r.revertURL, rel: "noopener noreferrer", target: "_blank", text: r.revertURL })]) : null,
        ]));
      }
      card.appendChild(groupTimeline(g, r));
      card.appendChild(membersTable(g, r));
      if (r.stages && r.stages.length) card.appendChild(releaseStagesTable(g, r));
      if (r.satOut.length) {
        card.appendChild(h("p", { className: "hint", text: "Sat this release out (not changed by its revision): " + r.satOut.join(", ") }));
      }
      if (g.history.length) {
        card.appendChild(h("details", { className: "data", "data-id": "history" }, [
          h("summary", { text: "Earlier releases (" + g.history.length + ")" }),
          historyTable(g),
        ]));
      }
      return card;
    }

    function groupTimeline(g, r) {
      var rows = r.members.map(function (m) {
        return { label: m.name, points: m.steps.map(function (s) {
          return { t: Date.parse(s.at), weight: s.weight, verdict: s.verdict,
            label: m.name + ", " + new Date(s.at).toLocaleTimeString() + ": weight " + s.weight + "%, " + s.verdict + (s.message ? ": " + s.message : "") };
        }) };
      });
      var svg = serinChart.timeline({
        title: "The members of " + g.name + " on the time line of release " + shortHashes(r.revision),
        description: r.members.map(function (m) {
          return m.name + ": " + (m.steps.length ? m.steps.map(function (s) { return s.weight + "% " + s.verdict; }).join(", ") : "no step yet");
        }).join("; "),
        rows: rows, width: 1100,
        start: r.startedAt ? Date.parse(r.startedAt) : null,
        end: r.finishedAt ? Date.parse(r.finishedAt) : Date.now(),
      });
      return h("figure", { className: "chart wide" }, [
        h("figcaption", {}, ["Members on one time line ", h("small", { text: "the weight at each analysis step; the dashed line is the release's start" })]), svg,
      ]);
    }

    // releaseStagesTable draws the release's promotions to the next
    // stages: one per stage, written by one member for the others, with
    // the stage's verdict.
    function releaseStagesTable(g, r) {
      return h("div", { className: "table-wrap" }, [h("table", { className: "steps wave", "data-id": "release-stages" }, [
        h("caption", { text: "Waves of the release" }),
        h("thead", {}, [h("tr", {}, ["Stage", "Phase", "Members", "Written by", "Pull request", "Stage commit", "Message"].map(function (t) {
          return h("th", { scope: "col", text: t });
        }))]),
        h("tbody", {}, r.stages.map(function (st) {
          return h("tr", { "data-stage": st.stage }, [
            h("th", { scope: "row", text: st.stage }),
            h("td", {}, [phaseBadge(st.phase)]),
            h("td", { text: (st.members || []).join(", ") }),
            h("td", { text: st.writtenBy }),
            h("td", {}, [st.pullRequestURL ? h("a", { href: st.pullRequestURL, rel: "noopener noreferrer", target: "_blank", text: "pull request" }) : "—"]),
            h("td", {}, [st.stageCommit ? h("code", { text: st.stageCommit.slice(0, 8), title: st.stageCommit }) : "—"]),
            h("td", { className: "message", text: shortHashes(st.message || "") }),
          ]);
        })),
      ])]);
    }

    function membersTable(g, r) {
      return h("div", { className: "table-wrap" }, [h("table", { className: "steps group-members" }, [
        h("caption", { className: "visually-hidden", text: "The members of the release of " + g.name }),
        h("thead", {}, [h("tr", {}, ["Member", "Phase", "Weight", "Steps passed", "In the group", "Message"].map(function (t) {
          return h("th", { scope: "col", text: t });
        }))]),
        h("tbody", {}, r.members.map(function (m) {
          return h("tr", { "data-member": m.name }, [
            h("td", {}, [h("a", { href: canaryURL({ namespace: g.namespace, name: m.name }), text: m.name })]),
            h("td", {}, [phaseBadge(m.phase)]),
            h("td", { text: m.weight + "%" }),
            h("td", { text: String(m.stepsPassed) }),
            h("td", { text: groupState(m) || "—" }),
            h("td", { className: "message", text: shortHashes(m.message || "") }),
          ]);
        })),
      ])]);
    }

    function historyTable(g) {
      return h("div", { className: "table-wrap" }, [h("table", { className: "steps" }, [
        h("caption", { className: "visually-hidden", text: "The earlier releases of " + g.name }),
        h("thead", {}, [h("tr", {}, ["Revision", "Phase", "Members", "Finished", "Decided by", "Message", "Revert"].map(function (t) {
          return h("th", { scope: "col", text: t });
        }))]),
        h("tbody", {}, g.history.map(function (r) {
          return h("tr", {}, [
            h("td", {}, [h("code", { text: shortHashes(r.revision), title: r.revision })]),
            h("td", {}, [phaseBadge(r.phase)]),
            h("td", { text: r.members.map(function (m) { return m.name + " " + m.phase; }).join(", ") }),
            h("td", {}, [time(r.finishedAt)]),
            h("td", { text: r.decidedBy || "—" }),
            h("td", { text: shortHashes(r.message || "") }),
            h("td", {}, [r.revertURL ? h("a", { href: r.revertURL, rel: "noopener noreferrer", target: "_blank", text: "revert" }) : "—"]),
          ]);
        })),
      ])]);
    }

    function applyFilter() {
      var words = filter.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      Array.prototype.forEach.call(rows.children, function (tr) {
        var text = tr.textContent.toLowerCase();
        tr.hidden = !words.every(function (w) { return text.indexOf(w) >= 0; });
        if (!tr.hidden) shown++;
      });
      var count = document.getElementById("count");
      if (!loaded) count.textContent = "Loading…";
      else if (words.length) count.textContent = shown + " of " + canaries.size + " Canaries match the filter";
      else count.textContent = canaries.size === 1 ? "1 Canary" : canaries.size + " Canaries";
    }
  }

  // ---- one Canary -----------------------------------------------------------

  function canaryPage(namespace, name) {
    document.title = name + " · serin dashboard";
    main.textContent = "";
    main.appendChild(document.getElementById("canary-view").content.cloneNode(true));
    document.getElementById("crumb").textContent = namespace + "/" + name;
    document.getElementById("canary-title").textContent = name;
    var current = null;
    var awaiting = null; // {verb, value}: the request this page made
    var drawn = { analysis: "", wave: "", previous: "", conditions: "" };
    setUpActions();

    connect("/api/events?namespace=" + encodeURIComponent(namespace) + "&name=" + encodeURIComponent(name), {
      canary: function (d) {
        if (!document.getElementById("facts")) {
          location.reload(); // deleted, then created again: lay the page out anew
          return;
        }
        var before = current;
        current = d;
        render(d);
        if (before && (before.phase !== d.phase || before.weight !== d.weight)) {
          announce(name + ": " + (d.phase || "no phase") + ", weight " + d.weight + "%");
        }
        if (before) announceWave(before.wave, d.wave);
      },
      deleted: function (d) {
        current = null;
        main.textContent = "";
        main.appendChild(h("h1", { text: name }));
        main.appendChild(h("p", { text: d.message }));
        main.appendChild(h("p", {}, [h("a", { href: "/", text: "All Canaries" })]));
        announce(d.message);
      },
    });

    function render(d) {
      var phase = document.getElementById("canary-phase");
      phase.replaceWith(phaseBadge(d.phase, "canary-phase"));
      renderFacts(d);
      renderRequests(d);
      redraw("analysis", d.rollouts.slice(0, 1), renderAnalysis);
      document.getElementById("wave-card").hidden = !d.wave.length;
      redraw("wave", d.wave, renderWave);
      redraw("previous", d.rollouts.slice(1), renderPrevious);
      redraw("conditions", d.conditions, renderConditions);
    }

    // redraw replaces a section only when its data changed, so that
    // focus and open details survive the updates of other sections.
    function redraw(id, data, draw) {
      var json = JSON.stringify(data);
      if (drawn[id] === json) return;
      drawn[id] = json;
      var box = document.getElementById(id);
      var open = Array.prototype.map.call(box.querySelectorAll("details[open]"), function (e) { return e.dataset.id; });
      box.textContent = "";
      draw(box, data);
      open.forEach(function (o) {
        var details = box.querySelector('details[data-id="' + CSS.escape(o) + '"]');
        if (details) details.open = true;
      });
    }

    function renderFacts(d) {
      var facts = document.getElementById("facts");
      facts.textContent = "";
      var add = function (label, value) {
        facts.appendChild(h("div", {}, [h("dt", { text: label }), h("dd", {}, [value])]));
      };
      add("Namespace", d.namespace);
      add("Target", d.target);
      add("Weight", h("span", { id: "canary-weight", text: d.weight + "% (max " + d.maxWeight + "%)" }));
      add("Revision", h("code", { text: shortHashes(d.revision) || "—", title: d.revision }));
      add("Promoted revision", h("code", { text: shortHashes(d.promotedRevision) || "—", title: d.promotedRevision }));
      add("Ready", h("span", { title: d.message }, [statusText(d.ready), d.message ? ": " + shortHashes(d.message) : ""]));
      add("Failed checks", d.failedChecks + " of " + d.threshold + " allowed");
      add("Interval", d.interval);
      add("Suspended", d.suspended ? "yes: requests wait until it is resumed" : "no");
      if (d.group) {
        var state = groupState(d.groupStatus);
        add("Group", h("span", { id: "canary-group" }, [h("a", { href: "/#" + groupAnchor(d.namespace, d.group), text: d.group }), state ? ": " + state : ""]));
      }
      var revert = d.revert ? h("span", {}, [revertCell(d.revert), d.revert.message ? " " + d.revert.message : ""]) : "none";
      add("GitOps revert", revert);
    }

    function setUpActions() {
      var labels = { promote: "Promote", abort: "Abort", retry: "Retry", revert: "Revert" };
      var box = document.getElementById("actions");
      Object.keys(labels).forEach(function (verb) {
        var button = h("button", { type: "button", id: "action-" + verb, className: verb === "promote" ? "primary" : (verb === "abort" ? "danger" : ""), text: labels[verb] });
        button.addEventListener("click", function () { confirmRequest(verb, labels[verb]); });
        box.appendChild(h("div", { className: "action" }, [button, h("small", { id: "action-" + verb + "-note" })]));
      });
    }

    function renderRequests(d) {
      d.requests.forEach(function (r) {
        var note = document.getElementById("action-" + r.verb + "-note");
        note.textContent = r.short;
        document.getElementById("action-" + r.verb).title = r.short;
        if (r.pending) {
          note.appendChild(h("span", { className: "pending", text: " · requested " + new Date(r.pending).toLocaleTimeString() + ", waiting for the agent" }));
        }
        if (awaiting && awaiting.verb === r.verb && r.handled === awaiting.value) {
          var text = r.verb + " request handled by the agent: phase " + (d.phase || "none") + ", weight " + d.weight + "%";
          document.getElementById("action-status").textContent = text;
          awaiting = null;
        }
      });
    }

    function confirmRequest(verb, label) {
      if (!current) return;
      var dialog = document.getElementById("confirm");
      var request = current.requests.find(function (r) { return r.verb === verb; });
      document.getElementById("confirm-title").textContent = label + " " + name + "?";
      document.getElementById("confirm-text").textContent = request.short + ". The agent acts on the request at its next reconcile" +
        (current.suspended ? ", once the Canary is resumed (it is suspended)." : ".");
      document.getElementById("confirm-button").textContent = label;
      dialog.returnValue = "";
      dialog.onclose = function () {
        if (dialog.returnValue === "confirm") send(verb);
        document.getElementById("action-" + verb).focus();
      };
      dialog.showModal();
    }

    function send(verb) {
      var status = document.getElementById("action-status");
      status.textContent = "Sending the " + verb + " request…";
      fetch("/api/canaries/" + encodeURIComponent(namespace) + "/" + encodeURIComponent(name) + "/" + verb, {
        method: "POST",
        headers: { "X-Serin-Token": token, "Content-Type": "application/json" },
        body: "{}",
      }).then(function (response) {
        return response.json().then(function (body) { return { ok: response.ok, body: body }; });
      }).then(function (res) {
        if (!res.ok) {
          status.textContent = "The " + verb + " request failed: " + res.body.error;
          return;
        }
        awaiting = { verb: verb, value: res.body.value };
        status.textContent = res.body.message;
        if (current) renderRequests(current);
      }).catch(function (err) {
        status.textContent = "The " + verb + " request failed: " + err;
      });
    }

    function renderAnalysis(box, rollouts) {
      if (!rollouts.length) {
        box.appendChild(h("p", { className: "hint", text: "No analysis recorded yet: the record begins at the first step of a new revision." }));
        return;
      }
      var r = rollouts[0];
      box.appendChild(recordHead(r, "h3"));
      if (r.message) box.appendChild(h("p", { text: r.message }));
      if (r.finishedAt) decisiveBlock(r).forEach(function (e) { box.appendChild(e); });
      if (r.omittedSteps) box.appendChild(h("p", { className: "hint", text: r.omittedSteps + " earlier steps are not kept in the record." }));
      var charts = h("div", { className: "charts" });
      charts.appendChild(weightChart(r));
      r.series.forEach(function (s) { charts.appendChild(checkChart(s)); });
      box.appendChild(charts);
      box.appendChild(h("h3", { text: "Steps" }));
      box.appendChild(stepsTable(r, "Steps of the revision " + (r.revision || "under analysis")));
    }

    // decisiveBlock lists the values that decided a rollout: its last
    // failed step's checks and webhooks, else its last step's.
    function decisiveBlock(r) {
      if (!r.decisive.length) return [];
      return [h("p", { text: "Decided by:" }),
        h("ul", { className: "decisive" }, r.decisive.map(function (l) { return h("li", { text: l }); }))];
    }

    function recordHead(r, tag) {
      var when = r.finishedAt ? "from " + new Date(r.startedAt).toLocaleString() + " to " + new Date(r.finishedAt).toLocaleString()
        : "since " + new Date(r.startedAt).toLocaleString();
      return h("div", { className: "record-head" }, [
        h(tag, {}, ["Revision ", h("code", { text: shortHashes(r.revision) || "(no Flux revision)", title: r.revision })]),
        phaseBadge(r.result || "Progressing"),
        h("span", { className: "when", text: when }),
      ]);
    }

    function weightChart(r) {
      var points = r.steps.map(function (s) {
        return { t: Date.parse(s.at), y: s.weight, verdict: s.verdict,
          label: new Date(s.at).toLocaleTimeString() + ": weight " + s.weight + "%, " + s.verdict + (s.message ? ": " + s.message : "") };
      });
      var top = Math.max.apply(null, [current.maxWeight || 0].concat(r.steps.map(function (s) { return s.weight; })));
      var svg = serinChart.line({
        title: "Canary weight per step",
        description: r.steps.length + " steps: weights " + r.steps.map(function (s) { return s.weight + "%"; }).join(", "),
        points: points, yMin: 0, yMax: Math.max(top, 10), step: true, unit: "%", width: 1100, height: 200,
        holdUntil: r.finishedAt ? Date.parse(r.finishedAt) : Date.now(),
      });
      return h("figure", { className: "chart wide", id: "weight-chart" }, [
        h("figcaption", {}, ["Weight ", h("small", { text: "traffic to the canary at each step" })]), svg,
      ]);
    }

    function checkChart(s) {
      var ranges = [];
      if (s.min !== null) ranges.push({ value: s.min, label: "min " + serinChart.formatNumber(s.min) });
      if (s.max !== null) ranges.push({ value: s.max, label: "max " + serinChart.formatNumber(s.max) });
      var points = s.points.map(function (p) {
        var v = p.value === null ? "no value" : serinChart.formatNumber(p.value);
        return { t: Date.parse(p.at), y: p.value, verdict: p.verdict,
          label: new Date(p.at).toLocaleTimeString() + " at weight " + p.weight + "%: " + v + ", " + p.verdict };
      });
      var range = ranges.map(function (x) { return x.label; }).join(", ") || "no range";
      var svg = serinChart.line({
        title: s.name + " per step (" + range + ")",
        description: s.points.map(function (p) { return (p.value === null ? "no value" : serinChart.formatNumber(p.value)) + " " + p.verdict; }).join("; "),
        points: points, ranges: ranges,
      });
      return h("figure", { className: "chart check-chart", "data-check": s.name }, [
        h("figcaption", {}, [s.name + " ", h("small", { text: range })]), svg,
      ]);
    }

    function stepsTable(r, caption) {
      var body = h("tbody");
      r.steps.forEach(function (s) {
        body.appendChild(h("tr", {}, [
          h("td", {}, [time(s.at)]),
          h("td", { text: s.weight + "%" + (s.iteration ? " (iteration " + s.iteration + ")" : "") }),
          h("td", { className: "verdict-" + s.verdict, text: s.verdict }),
          h("td", {}, [list(s.checks.map(function (c) { return h("span", { className: "verdict-" + c.verdict, text: c.line }); }))]),
          h("td", {}, [list(s.webhooks.map(function (w) {
            return h("span", { className: "verdict-" + w.verdict, text: w.name + " (" + w.type + "): " + w.verdict + (w.message ? ": " + w.message : "") });
          }))]),
          h("td", { text: s.message || "" }),
        ]));
      });
      return h("div", { className: "table-wrap" }, [h("table", { className: "steps" }, [
        h("caption", { className: "visually-hidden", text: caption }),
        h("thead", {}, [h("tr", {}, ["Time", "Weight", "Verdict", "Checks", "Webhooks", "Message"].map(function (t) {
          return h("th", { scope: "col", text: t });
        }))]),
        body,
      ])]);
    }

    function list(items) {
      if (!items.length) return document.createTextNode("—");
      return h("ul", {}, items.map(function (i) { return h("li", {}, [i]); }));
    }

    // announceWave tells screen readers of each stage whose phase changed.
    function announceWave(before, after) {
      var was = {};
      before.forEach(function (st) { was[st.stage] = st.phase; });
      after.forEach(function (st) {
        if (st.phase && was[st.stage] !== st.phase) announce(name + ": stage " + st.stage + " " + st.phase);
      });
    }

    // renderWave draws a row for each stage of the wave: its phase, the
    // revision, the pull request, the stage's verdict and its link, and
    // what the stage waits for or why it stopped.
    function renderWave(box, wave) {
      if (!wave.length) return;
      box.appendChild(h("div", { className: "table-wrap" }, [h("table", { className: "steps wave" }, [
        h("caption", { className: "visually-hidden", text: "The next stages of the promoted revision of " + name }),
        h("thead", {}, [h("tr", {}, ["Stage", "Phase", "Revision", "Pull request", "Stage commit", "Link", "Message"].map(function (t) {
          return h("th", { scope: "col", text: t });
        }))]),
        h("tbody", {}, wave.map(function (st) {
          return h("tr", { "data-stage": st.stage }, [
            h("th", { scope: "row", text: st.stage }),
            h("td", {}, [st.phase ? phaseBadge(st.phase) : h("span", { className: "hint", text: "waits for the next promoted revision" }),
              st.since ? h("small", { className: "since" }, [" since ", time(st.since)]) : null]),
            h("td", {}, [st.revision ? h("code", { text: shortHashes(st.revision), title: st.revision }) : "—"]),
            h("td", {}, [st.pullRequestURL ? externalLink(st.pullRequestURL, "pull request")
              : (st.commit ? h("code", { text: shortHashes(st.commit), title: (st.branch ? st.branch + ": " : "") + st.commit }) : "—")]),
            h("td", {}, [st.stageCommit ? h("code", { text: st.stageCommit.slice(0, 8), title: st.stageCommit }) : "—"]),
            h("td", {}, [st.url ? externalLink(st.url, "stage's Canary") : "—"]),
            h("td", { className: "message" }, [shortHashes(st.message || ""), stageWait(st)]),
          ]);
        })),
      ])]));
    }

    // stageWait says until when a stage soaks, or when a failed write is
    // tried again.
    function stageWait(st) {
      if (st.phase === "Soaking" && st.soakUntil) return h("div", { className: "hint" }, ["soaks until ", time(st.soakUntil)]);
      if (st.attempts) {
        return h("div", { className: "pending" }, [st.attempts + " failed attempts", st.nextAttemptTime ? ", next at " : "",
          st.nextAttemptTime ? time(st.nextAttemptTime) : null]);
      }
      return null;
    }

    function externalLink(url, text) {
      return h("a", { href: url, rel: "noopener noreferrer", target: "_blank", text: text, title: url });
    }

    function renderPrevious(box, rollouts) {
      if (!rollouts.length) {
        box.appendChild(h("p", { className: "hint", text: "No earlier rollout recorded." }));
        return;
      }
      rollouts.forEach(function (r, i) {
        var section = h("div", { className: "record" }, [recordHead(r, "h3")]);
        if (r.message) section.appendChild(h("p", { text: r.message }));
        decisiveBlock(r).forEach(function (e) { section.appendChild(e); });
        if (r.steps.length) {
          section.appendChild(h("details", { className: "data", "data-id": "previous-" + i }, [
            h("summary", { text: "Its last " + r.steps.length + " steps" + (r.omittedSteps ? " (" + r.omittedSteps + " earlier not kept)" : "") }),
            stepsTable(r, "Steps of the revision " + r.revision),
          ]));
        }
        box.appendChild(section);
      });
    }

    function renderConditions(box, conditions) {
      if (!conditions.length) {
        box.appendChild(h("p", { className: "hint", text: "No conditions yet." }));
        return;
      }
      box.appendChild(h("div", { className: "table-wrap" }, [h("table", {}, [
        h("caption", { className: "visually-hidden", text: "Conditions" }),
        h("thead", {}, [h("tr", {}, ["Type", "Status", "Reason", "Message", "Since"].map(function (t) {
          return h("th", { scope: "col", text: t });
        }))]),
        h("tbody", {}, conditions.map(function (c) {
          return h("tr", {}, [h("td", { text: c.type }), h("td", {}, [statusText(c.status)]), h("td", { text: c.reason }),
            h("td", { text: shortHashes(c.message), title: c.message }), h("td", {}, [time(c.since)])]);
        })),
      ])]));
    }
  }
})();
