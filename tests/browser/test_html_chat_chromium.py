"""The HTML report's chat view in real headless Chromium (docs/html-report.md, "Conversations"): a report of two
conversations and a single sample loads cleanly; a conversation's row opens the conversation as a chat, both turns'
messages and their scores shown; a turn's evidence and contexts open from their buttons, by mouse and by keyboard.

Needs the Debian packages chromium and chromium-driver and the pip package selenium; skips (never fails) without them.
Screenshots go to the test's tmp_path and, when LOCALRAGAS_SCREENSHOT_DIR is set, are copied there.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from chromium import NEEDS_CHROMIUM, start_chromium

pytestmark = NEEDS_CHROMIUM
try:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
except ImportError as exc:  # missing or broken: skip, never fail
    pytest.skip(f"selenium unavailable ({exc}): pip install selenium", allow_module_level=True)

from localragas import evaluate  # noqa: E402
from localragas.report.html_report import write_html  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat_samples.jsonl"
SINGLE = {"id": "single", "question": "What colour is the sky?", "answer": "The sky is blue.",
          "contexts": ["The sky is blue on a clear day."]}
CHINESE = {"id": "zh", "messages": [
    {"role": "user", "content": "基本套餐每月多少钱？"},
    {"role": "assistant", "content": "基本套餐每月十美元。", "contexts": ["基本套餐每月十美元，包含五个用户。"]}]}


@pytest.fixture(scope="module")
def report():
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return evaluate([*rows, CHINESE, SINGLE], judge="fake", embedder="fake", cache=False, progress=False, gate=False)


@pytest.fixture(scope="module")
def page(report, tmp_path_factory):
    path = tmp_path_factory.mktemp("html") / "chat.html"
    write_html(report, path)
    d = start_chromium(tmp_path_factory.mktemp("chromium-profile"), 1366, 900)
    d.get(path.as_uri())
    yield d
    d.quit()


def save(d, tmp_path: Path, name: str) -> None:
    shot = tmp_path / name
    assert d.save_screenshot(str(shot))
    if os.environ.get("LOCALRAGAS_SCREENSHOT_DIR"):
        out = Path(os.environ["LOCALRAGAS_SCREENSHOT_DIR"])
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, out / name)


def test_a_conversation_opens_as_a_chat_with_each_turns_scores_and_evidence(page, report, tmp_path):
    assert not [e for e in page.get_log("browser") if e["level"] == "SEVERE"]
    order = list(dict.fromkeys(s.turn.conversation for s in report.samples if s.turn))
    rows = page.find_elements(By.CSS_SELECTOR, "#conversation-table tbody tr")
    assert [r.get_attribute("data-id") for r in rows] == order and order[0] == "plans" and order[2] == "zh"
    singles = page.find_elements(By.CSS_SELECTOR, "#sample-table tbody tr")
    assert [r.get_attribute("data-id") for r in singles] == ["single"]  # the turns are not in the sample table

    rows[0].click()
    drawer = page.find_element(By.ID, "detail")
    assert drawer.is_displayed() and page.find_element(By.ID, "detail-title").text == "plans"
    turns = drawer.find_elements(By.CSS_SELECTOR, "ol.chat > li.turn")
    assert [t.find_element(By.TAG_NAME, "h3").text for t in turns] == ["Turn 1 of 2", "Turn 2 of 2"]
    users = [t.find_element(By.CSS_SELECTOR, ".bubble.user").text for t in turns]
    replies = [t.find_element(By.CSS_SELECTOR, ".bubble.assistant").text for t in turns]
    assert "What does the basic plan cost?" in users[0] and "And the premium tier?" in users[1]
    assert "The basic plan costs $10 a month." in replies[0]
    assert "The premium tier costs $25 a month and includes 20 users." in replies[1]
    user, reply = (turns[1].find_element(By.CSS_SELECTOR, f".bubble.{w}").rect for w in ("user", "assistant"))
    assert user["x"] > reply["x"]  # the user's message on one side, the assistant's on the other
    second = next(s for s in report.samples if s.id == "plans#2")
    faithfulness = f"faithfulness {second.metrics['faithfulness'].value:.3f}"
    assert faithfulness in turns[1].find_element(By.CSS_SELECTOR, "ul.turn-scores").text

    evidence = turns[1].find_element(By.CSS_SELECTOR, ".turn-evidence")
    button = turns[1].find_element(By.XPATH, ".//button[normalize-space()='evidence of turn 2']")
    assert not evidence.is_displayed() and button.get_attribute("aria-expanded") == "false"
    button.click()
    assert evidence.is_displayed() and button.get_attribute("aria-expanded") == "true"
    claims = [li.text for li in evidence.find_elements(By.CSS_SELECTOR, "ol.verdicts li .text")]
    assert "The premium tier costs $25 a month and includes 20 users." in claims
    assert evidence.find_elements(By.CSS_SELECTOR, "ol.chunks li")  # context precision's chunks
    contexts = turns[1].find_element(By.XPATH, ".//button[starts-with(normalize-space(), 'contexts (')]")
    contexts.send_keys(Keys.ENTER)  # a button: the keyboard opens it too
    assert "The premium tier is $25 per month with up to 20 users." in turns[1].find_element(
        By.CSS_SELECTOR, "ol.contexts").text
    save(page, tmp_path, "report-chat.png")

    page.find_element(By.ID, "detail-next").click()  # the table's next conversation
    assert page.find_element(By.ID, "detail-title").text == order[1]
    page.switch_to.active_element.send_keys(Keys.ESCAPE)
    assert not drawer.is_displayed()
    rows[2].send_keys(Keys.ENTER)  # a row opens from the keyboard; Chinese text shown as text
    assert "基本套餐每月多少钱？" in drawer.find_element(By.CSS_SELECTOR, ".bubble.user").text
    assert not [e for e in page.get_log("browser") if e["level"] == "SEVERE"]
