"""The served models' answers are labelled: a similarity model that ranks the unrelated pair above
a related one is marked WRONG ORDER in what the demo prints, never passed off as right."""

from pipeline.query_served_models import PAIRS, judge_similarity, similarity_answers


def scores(paraphrase, unrelated, same_event):
  by_relation = {"paraphrase": paraphrase, "unrelated": unrelated, "same event": same_event}
  return [by_relation[relation] for relation, _, _ in PAIRS]


def test_pairs_name_one_unrelated_pair_and_related_ones():
  relations = [relation for relation, _, _ in PAIRS]
  assert relations.count("unrelated") == 1 and len(set(relations)) == len(relations) >= 2


def test_related_pairs_above_the_unrelated_one_are_said_to_be_ranked_as_a_reader_would():
  verdict = judge_similarity(scores(0.61, 0.12, 0.55))
  assert verdict.startswith("ranks the paraphrase and the same event pairs above the unrelated")
  assert "WRONG" not in verdict


def test_the_last_demo_runs_answers_are_labelled_wrong():
  # The tiny BERT's served scores in a demo run whose dev Pearson was 0.26.
  verdict = judge_similarity(scores(0.359, 0.421, 0.338))
  assert verdict.startswith("WRONG ORDER")
  assert "paraphrase and the same event pair" in verdict


def test_a_tie_is_not_a_ranking():
  verdict = judge_similarity(scores(0.20, 0.20, 0.50))
  assert verdict.startswith("WRONG ORDER") and "the paraphrase pair" in verdict


def test_answers_give_each_pair_its_score_and_relation_then_the_verdict():
  lines = similarity_answers(scores(0.61, 0.12, 0.55))
  assert len(lines) == len(PAIRS) + 1
  assert lines[0].startswith("score +0.610  paraphrase:") and PAIRS[0][1] in lines[0]
  assert lines[1].startswith("score +0.120  unrelated:") and PAIRS[1][2] in lines[1]
  assert lines[-1] == judge_similarity(scores(0.61, 0.12, 0.55))

