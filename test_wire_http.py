"""Tests for the wire helpers of the Streamable HTTP transport: the SSE parser
and the body reader. Pure: no processes, no network.
"""

import random

import pytest

import mcp_invoke
from mcp_invoke import ConnectionLost, ProtocolError

Event = mcp_invoke._SSEEvent


def feed_all(parser, chunks):
    events = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    return events


def parse(*chunks, **options):
    """The events of a stream fed in these chunks, and the parser after it."""
    parser = mcp_invoke._SSEParser(options.get("max_bytes", 1000))
    return feed_all(parser, chunks), parser


# ---------------------------------------------------------------------------
# Server-sent events: every split of one stream gives the same events
# ---------------------------------------------------------------------------

# A BOM, comments, retry, ids, a named event, UTF-8 of 2 and 4 bytes, all three
# line ends (a CRLF that a split may cut), a field without a colon, an id-only
# event, invalid UTF-8, and an unfinished event at the end.
STREAM = (b"\xef\xbb\xbf: hello\r\n"
          b"retry: 3000\r\n"
          b"id: 1\r\n"
          b'data: {"jsonrpc":"2.0"}\r\n\r\n'
          b"event: ping\rdata: caf\xc3\xa9 \xf0\x9f\x98\x80\rdata\r\r"
          b"id: 2\n\n"
          b"data: a\r\n"
          b"data:  b\n"
          b": comment\r"
          b"id\n"
          b"\r\n"
          b"data: \xff\n\n"
          b"data: never dispatched")
EVENTS = [Event("message", '{"jsonrpc":"2.0"}', "1"),
          Event("ping", u"caf\u00e9 \U0001F600\n", "1"),
          Event("message", "a\n b", None),
          Event("message", u"\ufffd", None)]


def outcome(chunks):
    events, parser = parse(*chunks)
    return events, parser.last_id, parser.retry, parser.bad_utf8


def test_sse_reads_the_whole_stream_in_one_chunk():
    assert outcome([STREAM]) == (EVENTS, None, 3000, True)


def test_sse_gives_the_same_events_fed_one_byte_at_a_time():
    assert outcome([STREAM[i:i + 1] for i in range(len(STREAM))]) == (EVENTS, None, 3000, True)


def test_sse_gives_the_same_events_for_every_split_point():
    for i in range(len(STREAM) + 1):
        assert outcome([STREAM[:i], STREAM[i:]]) == (EVENTS, None, 3000, True), i


def test_sse_gives_the_same_events_for_random_chunkings():
    rng = random.Random(20251125)
    for _ in range(500):
        cuts = sorted(rng.sample(range(1, len(STREAM)), rng.randint(1, 30)))
        bounds = [0] + cuts + [len(STREAM)]
        chunks = [STREAM[a:b] for a, b in zip(bounds, bounds[1:])]
        assert outcome(chunks) == (EVENTS, None, 3000, True), cuts


# ---------------------------------------------------------------------------
# Server-sent events: each rule of "Event stream interpretation"
# ---------------------------------------------------------------------------

def test_sse_ends_lines_on_crlf_cr_and_lf_alike():
    for end in (b"\r\n", b"\r", b"\n"):
        events, _ = parse(b"data: a" + end + b"data: b" + end + end)
        assert events == [Event("message", "a\nb", None)]


def test_sse_cr_ending_one_chunk_and_lf_starting_the_next_are_one_line_end():
    parser = mcp_invoke._SSEParser(1000)
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\ndata: b\r") == []
    assert parser.feed(b"\n\r") == [Event("message", "a\nb", None)]
    assert parser.feed(b"\n") == []  # the LF of that CRLF, not a second blank line
    assert parser.feed(b"\ndata: c\n\n") == [Event("message", "c", None)]


def test_sse_cr_ending_a_chunk_dispatches_without_waiting_for_the_next():
    parser = mcp_invoke._SSEParser(1000)
    assert parser.feed(b"data: a\r\r") == [Event("message", "a", None)]
    assert parser.feed(b"") == []
    assert parser.feed(b"\n") == []  # an empty chunk between keeps the CR in mind


def test_sse_skips_one_bom_at_the_very_start_only():
    assert parse(b"\xef\xbb", b"\xbfdata: x\n\n")[0] == [Event("message", "x", None)]
    # A second BOM, or one later on, is part of the field name: an unknown field.
    assert parse(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n")[0] == []
    assert parse(b"data: x\n\n\xef\xbb\xbfdata: y\n\n")[0] == [Event("message", "x", None)]
    assert parse(b"\xef\xbb\xbf\n")[0] == []


def test_sse_decodes_characters_split_anywhere_across_chunks():
    line = u"data: \u00e9\u20ac\U0001F600\n\n".encode("utf-8")
    for i in range(len(line) + 1):
        events, parser = parse(line[:i], line[i:])
        assert events == [Event("message", u"\u00e9\u20ac\U0001F600", None)], i
        assert parser.bad_utf8 is False


def test_sse_replaces_invalid_utf8_and_says_so_once():
    events, parser = parse(b"data: a\xffb\n\ndata: \xe2\x82\n\ndata: ok\n\n")
    assert events == [Event("message", u"a\ufffdb", None), Event("message", u"\ufffd", None),
                      Event("message", "ok", None)]
    assert parser.bad_utf8 is True
    # A U+FFFD the server meant is not invalid UTF-8.
    assert parse(u"data: \ufffd\n\n".encode("utf-8"))[1].bad_utf8 is False


def test_sse_drops_one_space_after_the_colon_and_splits_on_the_first_colon():
    events, _ = parse(b"data:x\ndata: y\ndata:  z\ndata: a:b\ndata:\n\n")
    assert events == [Event("message", "x\ny\n z\na:b\n", None)]


def test_sse_a_field_without_a_colon_has_an_empty_value():
    assert parse(b"data\n\n")[0] == [Event("message", "", None)]
    assert parse(b"event\ndata: x\n\n")[0] == [Event("message", "x", None)]
    assert parse(b"id: 5\n\nid\ndata: x\n\n")[0] == [Event("message", "x", None)]


def test_sse_ignores_comments_and_unknown_fields():
    events, _ = parse(b": keep-alive\n:\nfoo: bar\nData: no\ndata : no\ndata: yes\n\n")
    assert events == [Event("message", "yes", None)]


def test_sse_names_events_and_resets_the_name_after_each():
    events, _ = parse(b"event: a\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\n")
    assert events == [Event("a", "1", None), Event("message", "2", None),
                      Event("message", "3", None)]


def test_sse_does_not_dispatch_an_event_without_data_yet_keeps_its_id():
    events, parser = parse(b"event: x\nid: 7\n\n")
    assert events == [] and parser.last_id == "7"
    assert parser.feed(b"data: next\n\n") == [Event("message", "next", "7")]


def test_sse_gives_the_priming_event_with_empty_data_and_its_id():
    # An id and an empty data field (2025-11-25 basic/transports).
    events, parser = parse(b"id: s1-0\ndata:\n\n")
    assert events == [Event("message", "", "s1-0")] and parser.last_id == "s1-0"


def test_sse_sets_the_last_id_only_when_an_event_is_dispatched():
    events, parser = parse(b"id: 1\ndata: a\n\nid: 2\ndata: b\n")
    assert events == [Event("message", "a", "1")] and parser.last_id == "1"
    assert parser.feed(b"\n") == [Event("message", "b", "2")] and parser.last_id == "2"


def test_sse_ignores_an_id_holding_nul_and_an_empty_id_clears_it():
    events, parser = parse(b"id: 1\n\nid: 2\x003\ndata: a\n\nid:\ndata: b\n\n")
    assert events == [Event("message", "a", "1"), Event("message", "b", None)]
    assert parser.last_id is None


def test_sse_takes_retry_of_ascii_digits_only():
    _, parser = parse(b"retry: 10\n", max_bytes=10000)
    assert parser.retry == 10
    for bad in (b"", b" 5", b"5 ", b"-1", b"1.5", b"10a", b"1e3",
                u"\u0663".encode("utf-8"), b"9" * 5000):
        assert parser.feed(b"retry: " + bad + b"\n") == []
        assert parser.retry == 10, bad
    parser.feed(b"retry:0\n")
    assert parser.retry == 0
    assert parse(b"data: x\n\n")[1].retry is None


def test_sse_drops_an_event_the_stream_ends_in():
    events, parser = parse(b"id: 9\ndata: unfinished\n")
    assert events == [] and parser.last_id is None


# ---------------------------------------------------------------------------
# Server-sent events: the byte cap on one event
# ---------------------------------------------------------------------------

CAP_MESSAGE = "server sent an event over 20 bytes (raise --max-bytes to allow it)"


def test_sse_accepts_an_event_of_exactly_max_bytes_and_fails_on_one_more():
    line = b"data: " + b"x" * 14  # 20 bytes; line ends are not counted
    assert parse(line + b"\r\n\r\n", max_bytes=20)[0] == [Event("message", "x" * 14, None)]
    parser = mcp_invoke._SSEParser(20)
    for byte in range(len(line)):
        assert parser.feed(line[byte:byte + 1]) == []
    with pytest.raises(ProtocolError) as info:
        parser.feed(b"x")  # byte 21 arrives: fail now, before any line end
    assert str(info.value) == CAP_MESSAGE
    assert len(parser._line) == 0 and parser._data == []  # what was read of it is released


def test_sse_counts_every_line_of_one_event_against_the_cap():
    parser = mcp_invoke._SSEParser(20)
    assert parser.feed(b"event: e\ndata: 12345\n") == []  # 8 + 11 bytes
    assert parser.feed(b"i") == []  # byte 20
    with pytest.raises(ProtocolError) as info:
        parser.feed(b"d")
    assert str(info.value) == CAP_MESSAGE


def test_sse_keeps_the_events_before_an_oversized_one_on_the_error():
    parser = mcp_invoke._SSEParser(20)
    with pytest.raises(ProtocolError) as info:
        parser.feed(b"data: a\n\ndata: b\n\ndata: " + b"x" * 30)
    assert info.value.events == [Event("message", "a", None), Event("message", "b", None)]


def test_sse_caps_each_event_never_the_stream():
    events, _ = parse(b"id: 1\ndata: 0123456789\n\n" * 1000, max_bytes=21)
    assert len(events) == 1000


def test_sse_comments_within_an_event_never_add_up_to_the_cap():
    # A comment counts while it is read (it is in memory), then is dropped.
    events, _ = parse(b"data: 0123456789\n" + b": keep-alive\n" * 1000 + b"\n", max_bytes=28)
    assert events == [Event("message", "0123456789", None)]


def test_sse_keep_alive_comments_without_blank_lines_never_reach_the_cap():
    parser = mcp_invoke._SSEParser(20)
    for _ in range(10000):
        assert parser.feed(b":\r\n") == []
    assert parser.feed(b"data: 0123456789\r\n\r\n") == [Event("message", "0123456789", None)]


def test_sse_fails_a_200_mb_line_within_its_first_megabyte():
    parser = mcp_invoke._SSEParser(1 << 20)
    fed = [0]

    def chunks():  # 200 MB in 64 KiB chunks, made as they are read
        yield b"data: "
        for _ in range(200 * 16):
            yield b"x" * 65536

    with pytest.raises(ProtocolError) as info:
        for chunk in chunks():
            fed[0] += len(chunk)
            parser.feed(chunk)
    assert "over 1048576 bytes" in str(info.value)
    assert fed[0] == 6 + 16 * 65536  # the chunk holding byte 1 MiB + 1
    assert fed[0] < 2 << 20


# ---------------------------------------------------------------------------
# A body that is not an event stream
# ---------------------------------------------------------------------------

def test_body_reader_joins_chunks_with_a_content_length():
    reader = mcp_invoke._BodyReader(100, length=10)
    for chunk in (b'{"a"', b"", b':"bc', b'"}'):
        reader.feed(chunk)
    assert reader.finish() == b'{"a":"bc"}'


def test_body_reader_joins_chunks_without_a_content_length():
    reader = mcp_invoke._BodyReader(100)
    for chunk in (b"[1,", b"2]"):
        reader.feed(chunk)
    assert reader.finish() == b"[1,2]"
    assert mcp_invoke._BodyReader(100).finish() == b""


def test_body_reader_accepts_max_bytes_and_fails_on_one_more_as_it_arrives():
    for length in (None, 20):
        reader = mcp_invoke._BodyReader(20, length=length)
        reader.feed(b"x" * 20)
        assert reader.finish() == b"x" * 20
    reader = mcp_invoke._BodyReader(20)
    reader.feed(b"x" * 19)
    reader.feed(b"x")
    with pytest.raises(ProtocolError) as info:
        reader.feed(b"x")
    assert str(info.value) == "server sent an answer over 20 bytes (raise --max-bytes to allow it)"
    assert len(reader._body) == 0


def test_body_reader_refuses_a_content_length_over_max_bytes_before_reading():
    with pytest.raises(ProtocolError) as info:
        mcp_invoke._BodyReader(20, length=21)
    assert str(info.value) == ("server announced an answer of 21 bytes, over 20 bytes "
                               "(raise --max-bytes to allow it)")


def test_body_reader_finds_a_body_shorter_than_its_content_length():
    reader = mcp_invoke._BodyReader(100, length=10)
    reader.feed(b"abc")
    with pytest.raises(ConnectionLost) as info:
        reader.finish()
    assert str(info.value) == "the server's answer ended after 3 of 10 bytes"
    assert info.value.exit_code == 5


def test_body_reader_refuses_bytes_past_its_content_length():
    reader = mcp_invoke._BodyReader(100, length=3)
    reader.feed(b"ab")
    with pytest.raises(ProtocolError) as info:
        reader.feed(b"cd")
    assert str(info.value) == "server sent an answer longer than its Content-Length of 3 bytes"
