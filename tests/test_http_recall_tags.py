"""POST /recall takes "tags" (a bounded array of strings) and narrows recall by them;
bad tags are a 400 naming the problem, and the OpenAPI document describes the field."""

from __future__ import annotations

from pathlib import Path

from http_support import running


async def test_recall_body_takes_tags_and_hits_score_by_them(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        for text, tags in (("The quarterly numbers are due on Friday.", ["work"]),
                           ("My quarterly budget report for the book club is done.", [])):
            r = await client.post("/observe", json={"text": text, "speaker": "Caroline",
                                                    "tags": tags})
            assert r.status_code == 201, r.text
        plain = await client.post("/recall", json={"query": "quarterly report"})
        tagged = await client.post("/recall", json={"query": "quarterly report",
                                                    "tags": ["WORK", "nope"]})
        assert plain.status_code == tagged.status_code == 200, tagged.text
        score = {h["text"]: h["tags"] for h in plain.json()["hits"]}
        narrowed = {h["text"]: h["tags"] for h in tagged.json()["hits"]}
        assert set(score) == set(narrowed)  # all in working: all still compete
        numbers = next(t for t in narrowed if "quarterly numbers" in t)
        report = next(t for t in narrowed if "budget report" in t)
        assert score[numbers] == 0 and narrowed[numbers] > 0  # half the tags: "work"
        assert narrowed[report] == 0


async def test_bad_tags_are_a_400_naming_the_problem(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        cases = [
            ({"tags": "work"}, "$.tags: expected array"),
            ({"tags": ["work", 7]}, "$.tags[1]: expected string"),
            ({"tags": [f"t{i}" for i in range(33)]}, "$.tags: item count 33"),
            ({"tags": ["   "]}, "$.tags[0]"),
        ]
        for extra, named in cases:
            r = await client.post("/recall", json={"query": "x", **extra})
            assert r.status_code == 400, (extra, r.text)
            body = r.json()
            assert set(body) == {"error", "detail"} and named in body["detail"], (named, body)


async def test_openapi_documents_recall_tags(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        doc = (await client.get("/openapi.json")).json()
    body = doc["paths"]["/recall"]["post"]["requestBody"]["content"]["application/json"]
    tags = body["schema"]["properties"]["tags"]
    assert tags["type"] == "array" and tags["maxItems"] == 32
    assert tags["items"]["type"] == "string" and "narrow long-term search" in tags["description"]
