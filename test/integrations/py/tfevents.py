"""An independent reader of TensorBoard event files, with nothing but Python's standard library.

Usage: python3 tfevents.py LOGDIR  ->  JSON on stdout: {"files": [{"path", "events": [...]}]}

It shares no code with corl: its own CRC32C (bit by bit, Castagnoli polynomial), its own TFRecord
framing check and its own protobuf wire decoding of the Event messages TensorBoard reads:
  Event: wall_time 1 (double), step 2 (int64), file_version 3 (string), summary 5, source_metadata 10
  Summary: value 1 (repeated) -> Value: tag 1, simple_value 2 (float), tensor 8, metadata 9
  TensorProto: dtype 1, tensor_shape 2, string_val 8; SummaryMetadata: plugin_data 1 -> plugin_name 1, content 2
Any CRC that does not match, a truncated record, an unknown wire type or a field of the wrong wire
type is an error (exit status 1, the reason on stderr).
"""
import json
import os
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


class Bad(Exception):
    pass


def varint(buf, at):
    shift = 0
    value = 0
    while True:
        if at >= len(buf):
            raise Bad("varint runs past the end")
        b = buf[at]
        at += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise Bad("varint longer than 10 bytes")


def fields(buf):
    """Yield (field number, wire type, value) of a message; value is int, bytes, or raw fixed bytes."""
    at = 0
    while at < len(buf):
        key, at = varint(buf, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(buf, at)
        elif wire == 1:
            value, at = buf[at:at + 8], at + 8
        elif wire == 2:
            n, at = varint(buf, at)
            value, at = buf[at:at + n], at + n
        elif wire == 5:
            value, at = buf[at:at + 4], at + 4
        else:
            raise Bad("unknown wire type %d" % wire)
        if at > len(buf):
            raise Bad("field %d runs past the end of its message" % number)
        yield number, wire, value


def expect(wire, want, what):
    if wire != want:
        raise Bad("%s: wire type %d, expected %d" % (what, wire, want))


def tensor(buf):
    out = {"dtype": 0, "dims": [], "string_val": []}
    for number, wire, value in fields(buf):
        if number == 1:
            expect(wire, 0, "TensorProto.dtype")
            out["dtype"] = value
        elif number == 2:
            expect(wire, 2, "TensorProto.tensor_shape")
            for n2, w2, v2 in fields(value):
                if n2 == 2:
                    expect(w2, 2, "TensorShapeProto.dim")
                    out["dims"].append(dict((a, b) for a, _, b in fields(v2) if a == 1).get(1, 0))
        elif number == 8:
            expect(wire, 2, "TensorProto.string_val")
            out["string_val"].append(value.decode("utf-8"))
    return out


def metadata(buf):
    out = {}
    for number, wire, value in fields(buf):
        if number == 1:
            expect(wire, 2, "SummaryMetadata.plugin_data")
            for n2, w2, v2 in fields(value):
                if n2 == 1:
                    expect(w2, 2, "PluginData.plugin_name")
                    out["plugin_name"] = v2.decode("utf-8")
                elif n2 == 2:
                    expect(w2, 2, "PluginData.content")
                    out["content"] = v2.hex()
    return out


def summary_value(buf):
    out = {}
    for number, wire, value in fields(buf):
        if number == 1:
            expect(wire, 2, "Value.tag")
            out["tag"] = value.decode("utf-8")
        elif number == 2:
            expect(wire, 5, "Value.simple_value")
            out["simple_value"] = struct.unpack("<f", value)[0]
        elif number == 8:
            expect(wire, 2, "Value.tensor")
            out["tensor"] = tensor(value)
        elif number == 9:
            expect(wire, 2, "Value.metadata")
            out["metadata"] = metadata(value)
    return out


def event(buf):
    out = {"step": 0}
    for number, wire, value in fields(buf):
        if number == 1:
            expect(wire, 1, "Event.wall_time")
            out["wall_time"] = struct.unpack("<d", value)[0]
        elif number == 2:
            expect(wire, 0, "Event.step")
            out["step"] = value - (1 << 64) if value >= 1 << 63 else value
        elif number == 3:
            expect(wire, 2, "Event.file_version")
            out["file_version"] = value.decode("utf-8")
        elif number == 5:
            expect(wire, 2, "Event.summary")
            out["values"] = [summary_value(v) for n, w, v in fields(value) if n == 1 and (expect(w, 2, "Summary.value") or True)]
        elif number == 10:
            expect(wire, 2, "Event.source_metadata")
            out["writer"] = dict((n, v.decode("utf-8")) for n, _, v in fields(value)).get(1)
    return out


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    at = 0
    while at < len(data):
        if len(data) - at < 12:
            raise Bad("%s: a record header cut short at byte %d" % (path, at))
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        if length_crc != masked(header):
            raise Bad("%s: length CRC mismatch at byte %d" % (path, at))
        end = at + 12 + length
        if end + 4 > len(data):
            raise Bad("%s: record data cut short at byte %d" % (path, at))
        body = data[at + 12:end]
        (data_crc,) = struct.unpack("<I", data[end:end + 4])
        if data_crc != masked(body):
            raise Bad("%s: data CRC mismatch at byte %d" % (path, at))
        yield body
        at = end + 4


def main(logdir):
    files = []
    for root, _dirs, names in os.walk(logdir):
        for name in sorted(names):
            if "tfevents" in name:
                path = os.path.join(root, name)
                files.append({"path": os.path.relpath(path, logdir), "events": [event(r) for r in records(path)]})
    files.sort(key=lambda f: f["path"])
    json.dump({"files": files}, sys.stdout)


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except Bad as e:
        sys.stderr.write("%s\n" % e)
        sys.exit(1)
