// The desk's page: plain ES module, no framework. Everything shown is set as text (never HTML),
// so names and answers from a program cannot inject markup.

const cards = document.getElementById("cards");
const form = document.getElementById("ask");
const questionBox = document.getElementById("question");
const askButton = document.getElementById("ask-button");
let newConversation = true;
// The page's own token, given in the page by the desk: every API call carries it, so the desk's
// cookie alone (which the browser sends from any page of 127.0.0.1) acts on nothing.
const pageToken = document.querySelector('meta[name="codeaction-page"]')?.content ?? "";

/** fetch() of the desk's API, with the page's token. */
function api(path, init = {}) {
  return fetch(path, { ...init, headers: { ...init.headers, "x-codeaction-page": pageToken } });
}

function element(tag, properties = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(properties)) {
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

const upload = { maxBytes: 0, extensions: [] };

async function loadFiles() {
  const response = await api("/api/files");
  if (!response.ok) return;
  const { files, maxUploadBytes, extensions } = await response.json();
  upload.maxBytes = maxUploadBytes;
  upload.extensions = extensions;
  document.getElementById("drop-hint").textContent =
    `${extensions.join(" ")}, up to ${sizeText(maxUploadBytes)} each`;
  const list = document.getElementById("files");
  list.replaceChildren(...files.map((path) => element("li", { text: path.split("/").at(-1), title: path })));
  if (files.length === 0) list.append(element("li", { text: "no data files" }));
}

/** The desk's past runs from the journal, newest first: the question, its status and when. */
async function loadRuns() {
  const response = await api("/api/runs");
  if (!response.ok) return;
  const { runs } = await response.json();
  const list = document.getElementById("runs");
  list.replaceChildren(
    ...runs.map((run) =>
      element("li", { className: `past-run ${run.status}`, title: run.answer ?? run.error ?? "" }, [
        element("span", { className: "question", text: run.question }),
        element("span", {
          className: "meta",
          text: `${run.status}, ${run.startedAt.replace("T", " ").slice(0, 19)}${run.runId ? `, ${run.runId}` : ""}`,
        }),
      ]),
    ),
  );
  if (runs.length === 0) list.append(element("li", { className: "meta", text: "none yet" }));
}

function sizeText(bytes) {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1).replace(/\.0$/, "")} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1).replace(/\.0$/, "")} KiB`;
  return `${bytes} bytes`;
}

/** Shows the outcome of an upload under the drop zone: a line, and the fix on a second one. */
function uploadMessage(text, options = {}) {
  const message = document.getElementById("upload-message");
  message.className = options.error ? "error" : "";
  message.replaceChildren(element("span", { text }));
  if (options.fix) message.append(element("span", { className: "fix", text: options.fix }));
}

/** Sends each file to the desk's upload folder, one after the other; a file over the limit is not sent. */
async function uploadFiles(files) {
  for (const file of files) {
    if (file.size > upload.maxBytes) {
      uploadMessage(
        `${file.name} (${sizeText(file.size)}) is over the desk's upload limit of ${sizeText(upload.maxBytes)}`,
        {
          error: true,
          fix: "give a larger file on the command line instead: codeaction desk --file FILE",
        },
      );
      continue;
    }
    uploadMessage(`uploading ${file.name} (${sizeText(file.size)})`);
    try {
      const response = await api(`/api/upload?name=${encodeURIComponent(file.name)}`, {
        method: "POST",
        headers: { "content-type": "application/octet-stream" },
        body: file,
      });
      const answer = await response.json();
      if (!response.ok) {
        uploadMessage(answer.error, { error: true, fix: answer.fix });
        continue;
      }
      uploadMessage(`${answer.name} added`);
      await loadFiles();
    } catch (error) {
      uploadMessage(`${file.name} did not upload: ${error.message}`, { error: true });
    }
  }
}

function setUpDrop() {
  const drop = document.getElementById("drop");
  drop.addEventListener("dragover", (event) => {
    event.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (event) => {
    event.preventDefault();
    drop.classList.remove("over");
    void uploadFiles([...(event.dataTransfer?.files ?? [])]);
  });
  const pick = document.getElementById("pick");
  pick.addEventListener("change", () => {
    void uploadFiles([...pick.files]);
    pick.value = "";
  });
}

/** Reads a text/event-stream body, calling `onEvent(name, data)` for each event. */
async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end = buffer.indexOf("\n\n");
    while (end !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const name = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
      const data = /^data: (.*)$/m.exec(block)?.[1];
      onEvent(name, data === undefined ? undefined : JSON.parse(data));
      end = buffer.indexOf("\n\n");
    }
  }
}

function isRecordList(value) {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => item && typeof item === "object" && !Array.isArray(item))
  );
}

function cellText(value) {
  if (typeof value === "number") return value.toLocaleString("en-US", { maximumFractionDigits: 6 });
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A table of records whose column headers sort it (click again: the other way). */
function recordTable(rows) {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const body = element("tbody");
  const fill = (ordered) =>
    body.replaceChildren(
      ...ordered.map((row) =>
        element(
          "tr",
          {},
          columns.map((column) =>
            element("td", {
              text: cellText(row[column]),
              className: typeof row[column] === "number" ? "number" : "",
            }),
          ),
        ),
      ),
    );
  const headers = columns.map((column) => element("th", { text: column, scope: "col" }));
  headers.forEach((header, index) => {
    header.addEventListener("click", () => {
      const direction = header.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
      for (const other of headers) other.removeAttribute("aria-sort");
      header.setAttribute("aria-sort", direction);
      const column = columns[index];
      const sign = direction === "ascending" ? 1 : -1;
      fill(
        [...rows].sort((left, right) => {
          const a = left[column];
          const b = right[column];
          if (typeof a === "number" && typeof b === "number") return (a - b) * sign;
          return String(a ?? "").localeCompare(String(b ?? "")) * sign;
        }),
      );
    });
  });
  fill(rows);
  return element("table", { className: "answer-table" }, [
    element("thead", {}, [element("tr", {}, headers)]),
    body,
  ]);
}

function answerView(value, answer) {
  if (isRecordList(value)) return recordTable(value);
  if (Array.isArray(value) && value.length > 0) return recordTable(value.map((item) => ({ value: item })));
  if (value && typeof value === "object") {
    return recordTable(Object.entries(value).map(([key, item]) => ({ key, value: item })));
  }
  return element("p", { className: "answer-text", text: answer });
}

/** The program with keywords, strings and comments marked (a simple highlighter, text nodes only). */
function highlighted(program) {
  const pattern =
    /(#[^\n]*)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|\b(def|return|for|in|if|else|elif|import|from|as|with|while|not|and|or|None|True|False|lambda|class|try|except|finally|print)\b/g;
  const code = element("code");
  let last = 0;
  for (const match of program.matchAll(pattern)) {
    code.append(program.slice(last, match.index));
    const kind = match[1] ? "comment" : match[2] ? "string" : "keyword";
    code.append(element("span", { className: kind, text: match[0] }));
    last = match.index + match[0].length;
  }
  code.append(program.slice(last));
  return element("pre", {}, [code]);
}

function showAnswer(card, data) {
  card.body.append(answerView(data.value, data.answer));
  for (const file of data.files) {
    if (/^image\/(png|svg\+xml)$/.test(file.mediaType)) {
      card.body.append(element("img", { src: file.url, alt: file.name, className: "chart" }));
    } else {
      card.body.append(
        element("p", {}, [
          element("a", {
            href: file.url,
            download: file.name,
            className: "download",
            text: `Download ${file.name} (${file.size} bytes)`,
          }),
        ]),
      );
    }
  }
  for (const refused of data.refusedFiles ?? []) {
    card.body.append(
      element("p", { className: "error", text: `${refused.name} did not come back: ${refused.reason}` }),
    );
  }
  const tokens = data.usage?.totalTokens === undefined ? "" : `, ${data.usage.totalTokens} tokens`;
  card.meta.textContent = `${(data.totalMs / 1000).toFixed(2)} s${tokens}, question ${data.conversationQuestions} of this conversation, run ${data.runId}`;
}

/** The most output lines a card shows while the program runs (the earliest go first). */
const maxLiveLines = 500;

/** One line the program wrote, as it runs: appended to the card's live output, bounded. */
function showLine(card, data) {
  if (!card.live) {
    card.live = element("pre", { className: "live-output" });
    card.progress.after(card.live);
  }
  const text = data.cut ? "(the rest of the output is not shown while it runs)" : data.line;
  card.live.append(
    element("span", { className: data.stream === "stderr" ? "stderr" : "", text: `${text}\n` }),
  );
  while (card.live.childElementCount > maxLiveLines) card.live.firstElementChild.remove();
  card.live.scrollTop = card.live.scrollHeight;
}

/** "attempt 2", or with steps past the first "step 2, attempt 3": which program a line is about. */
function whichProgram(data) {
  return data.step > 1 ? `step ${data.step}, attempt ${data.attempt}` : `attempt ${data.attempt}`;
}

/** What an attempt printed, collapsed; a failed one's error line first, in plain sight. */
function showOutput(card, data) {
  const output = `${data.stdout}${data.stderr}`;
  // A failed attempt's error line, found by the desk (desk-failure.ts lastErrorLine).
  const errorLine = data.status === "ok" ? undefined : data.errorLine;
  if (errorLine) {
    card.details.append(
      element("p", { className: "error-line" }, [
        element("span", { className: "meta", text: `${capitalized(whichProgram(data))} stopped with ` }),
        element("code", { text: errorLine }),
      ]),
    );
  }
  const summary = errorLine
    ? `Traceback and output, ${whichProgram(data)}`
    : `Output, ${whichProgram(data)} (${data.status})`;
  card.details.append(
    element("details", { className: "output" }, [
      element("summary", { text: summary }),
      element("pre", { text: output }),
    ]),
  );
}

function capitalized(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function newCard(question) {
  const card = element("article", {
    className: newConversation ? "card" : "card follow-up",
    "data-state": "running",
  });
  const progress = element("p", { className: "progress", text: "sending the question" });
  const body = element("div", { className: "answer" });
  const details = element("div", { className: "details" });
  const meta = element("p", { className: "meta" });
  card.append(element("h3", { text: question }), progress, body, details, meta);
  cards.prepend(card);
  return { card, progress, body, details, meta };
}

async function ask(question) {
  const card = newCard(question);
  askButton.disabled = true;
  const startedConversation = newConversation;
  newConversation = false;
  try {
    const response = await api("/api/ask", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ question, newConversation: startedConversation }),
    });
    if (!response.ok) {
      const { error } = await response.json();
      card.progress.replaceChildren(element("span", { className: "error", text: error }));
      card.card.dataset.state = "failed";
      return;
    }
    await readEvents(response, (name, data) => {
      if (name === "progress") card.progress.textContent = data.text;
      else if (name === "program") {
        card.progress.textContent = `running the program (${whichProgram(data)}) in the sandbox`;
        card.details.append(
          element("details", { className: "program" }, [
            element("summary", { text: `Program, ${whichProgram(data)}` }),
            highlighted(data.program),
          ]),
        );
      } else if (name === "line") {
        showLine(card, data);
      } else if (name === "tool") {
        card.details.append(
          element("p", {
            className: "tool-call meta",
            text: `tool call ${data.tool}: ${data.status} (${data.durationMs} ms)`,
          }),
        );
      } else if (name === "output" && (data.stdout || data.stderr)) {
        showOutput(card, data);
      } else if (name === "answer") {
        card.progress.remove();
        // The output as it ran gives way to each attempt's output, under Details.
        card.live?.remove();
        showAnswer(card, data);
        card.card.dataset.state = "answered";
      } else if (name === "error") {
        // The traceback as it ran gives way to each attempt's error line, its output collapsed.
        card.live?.remove();
        card.progress.replaceChildren(element("span", { className: "error", text: data.message }));
        if (data.fix) card.progress.append(element("span", { className: "fix", text: data.fix }));
        card.card.dataset.state = "failed";
      }
    });
  } catch (error) {
    card.progress.replaceChildren(
      element("span", { className: "error", text: `the desk did not answer: ${error.message}` }),
    );
    card.card.dataset.state = "failed";
  } finally {
    void loadRuns();
    if (card.card.dataset.state === "running") {
      card.progress.replaceChildren(
        element("span", { className: "error", text: "the desk's answer ended before the turn did" }),
      );
      card.card.dataset.state = "failed";
    }
    askButton.disabled = false;
  }
}

// Enter asks, as in every chat box; Shift+Enter makes a new line (and Enter while composing text
// in an input method finishes the composition).
questionBox.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
  event.preventDefault();
  if (!askButton.disabled) form.requestSubmit();
});
form.addEventListener("submit", (event) => {
  event.preventDefault();
  const question = questionBox.value.trim();
  if (question === "") return;
  questionBox.value = "";
  void ask(question);
});
document.getElementById("new-conversation").addEventListener("click", () => {
  newConversation = true;
  cards.prepend(element("hr"));
});
setUpDrop();
void loadFiles();
void loadRuns();
