// Copyright 2026 The serin authors. Licensed under the Apache License, Version 2.0.
// The theme the user chose with the toggle, applied before the page paints;
// without a choice the page follows prefers-color-scheme.
(function () {
  try {
    var theme = localStorage.getItem("serin-theme");
    if (theme === "light" || theme === "dark") {
      document.documentElement.dataset.theme = theme;
    }
  } catch (e) { /* storage may be disabled: follow the system */ }
})();
