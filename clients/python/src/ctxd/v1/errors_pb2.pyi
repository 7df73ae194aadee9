from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_TYPE_UNSPECIFIED: _ClassVar[ErrorType]
    ERROR_TYPE_NOT_FOUND: _ClassVar[ErrorType]
    ERROR_TYPE_PATH_CONFLICT: _ClassVar[ErrorType]
    ERROR_TYPE_NO_TEXT_CONTENT: _ClassVar[ErrorType]
    ERROR_TYPE_INVALID_ARGUMENT: _ClassVar[ErrorType]
    ERROR_TYPE_INVALID_PATCH: _ClassVar[ErrorType]
    ERROR_TYPE_IS_DIRECTORY: _ClassVar[ErrorType]
    ERROR_TYPE_NOT_DIRECTORY: _ClassVar[ErrorType]
    ERROR_TYPE_CONTENT_TOO_LARGE: _ClassVar[ErrorType]
    ERROR_TYPE_OUT_OF_RANGE: _ClassVar[ErrorType]
    ERROR_TYPE_CONTENT_CHANGED: _ClassVar[ErrorType]
    ERROR_TYPE_DIRECTORY_NOT_EMPTY: _ClassVar[ErrorType]
    ERROR_TYPE_UNAUTHENTICATED: _ClassVar[ErrorType]
    ERROR_TYPE_PERMISSION_DENIED: _ClassVar[ErrorType]
    ERROR_TYPE_UNAVAILABLE: _ClassVar[ErrorType]
    ERROR_TYPE_UNIMPLEMENTED: _ClassVar[ErrorType]
    ERROR_TYPE_INTERNAL: _ClassVar[ErrorType]
    ERROR_TYPE_SOURCE_REFUSED: _ClassVar[ErrorType]
    ERROR_TYPE_SOURCE_UNREADABLE: _ClassVar[ErrorType]
    ERROR_TYPE_CANCELLED: _ClassVar[ErrorType]
    ERROR_TYPE_DEADLINE_EXCEEDED: _ClassVar[ErrorType]
    ERROR_TYPE_READ_ONLY: _ClassVar[ErrorType]
ERROR_TYPE_UNSPECIFIED: ErrorType
ERROR_TYPE_NOT_FOUND: ErrorType
ERROR_TYPE_PATH_CONFLICT: ErrorType
ERROR_TYPE_NO_TEXT_CONTENT: ErrorType
ERROR_TYPE_INVALID_ARGUMENT: ErrorType
ERROR_TYPE_INVALID_PATCH: ErrorType
ERROR_TYPE_IS_DIRECTORY: ErrorType
ERROR_TYPE_NOT_DIRECTORY: ErrorType
ERROR_TYPE_CONTENT_TOO_LARGE: ErrorType
ERROR_TYPE_OUT_OF_RANGE: ErrorType
ERROR_TYPE_CONTENT_CHANGED: ErrorType
ERROR_TYPE_DIRECTORY_NOT_EMPTY: ErrorType
ERROR_TYPE_UNAUTHENTICATED: ErrorType
ERROR_TYPE_PERMISSION_DENIED: ErrorType
ERROR_TYPE_UNAVAILABLE: ErrorType
ERROR_TYPE_UNIMPLEMENTED: ErrorType
ERROR_TYPE_INTERNAL: ErrorType
ERROR_TYPE_SOURCE_REFUSED: ErrorType
ERROR_TYPE_SOURCE_UNREADABLE: ErrorType
ERROR_TYPE_CANCELLED: ErrorType
ERROR_TYPE_DEADLINE_EXCEEDED: ErrorType
ERROR_TYPE_READ_ONLY: ErrorType

class ErrorDetail(_message.Message):
    __slots__ = ("type", "next_action_hint", "ref", "nearby_refs")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NEXT_ACTION_HINT_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    NEARBY_REFS_FIELD_NUMBER: _ClassVar[int]
    type: ErrorType
    next_action_hint: str
    ref: str
    nearby_refs: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, type: _Optional[_Union[ErrorType, str]] = ..., next_action_hint: _Optional[str] = ..., ref: _Optional[str] = ..., nearby_refs: _Optional[_Iterable[str]] = ...) -> None: ...
