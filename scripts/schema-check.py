"""Python's jsonschema over files, as check-jsonschema reads and checks them (npm run test:install runs
it in a venv, through scripts/schema-validators.mjs): the schema's base URI is its file's when it has no
$id, references are read from files relative to it, YAML is read as YAML 1.2 with dates kept as text.
Reads [{"file", "schema"}, ...] as JSON on stdin; writes, for each, "valid" or the errors found."""
import json
import pathlib
import sys
import urllib.parse

import referencing
import ruamel.yaml
from jsonschema.validators import validator_for
from referencing.jsonschema import DRAFT7


def yaml_reader():
    impl = ruamel.yaml.YAML(typ="safe", pure=True)
    constructors = impl.constructor.yaml_constructors
    constructors["tag:yaml.org,2002:timestamp"] = constructors["tag:yaml.org,2002:str"]
    return impl


YAML = yaml_reader()


def read(path):
    text = pathlib.Path(path).read_text(encoding="utf-8")
    return YAML.load(text) if path.endswith((".yaml", ".yml")) else json.loads(text)


def retrieve(uri):
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme != "file":
        raise referencing.exceptions.NoSuchResource(ref=uri)
    return referencing.Resource.from_contents(read(urllib.parse.unquote(parts.path)), default_specification=DRAFT7)


def check(item):
    schema = read(item["schema"])
    schema.setdefault("$id", pathlib.Path(item["schema"]).resolve().as_uri())
    cls = validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema, registry=referencing.Registry(retrieve=retrieve))
    errors = sorted(validator.iter_errors(read(item["file"])), key=lambda e: list(e.absolute_path))
    if not errors:
        return "valid"
    return "; ".join(f"{'.'.join(str(p) for p in e.absolute_path) or '(document)'}: {e.message}" for e in errors[:5])


print(json.dumps([check(item) for item in json.load(sys.stdin)]))
