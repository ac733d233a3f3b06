%% Validates request params against a workload spec's "params" schemas.
%%
%% Only the part of JSON Schema the specs use is understood: type (integer,
%% number, string, array, object), enum, minimum, maximum, exclusiveMinimum,
%% exclusiveMaximum, minLength, maxLength, minItems, maxItems, items,
%% properties, required and additionalProperties = false. A failure is one
%% sentence naming the parameter, its value and what is accepted, e.g.
%% "n = 1 is out of range: n must be an integer >= 2 and <= 134217727".
-module(msgbench_params).

-export([validate/3, describe_value/1]).

%% Params are checked in the order of their names so that the first
%% complaint does not depend on map ordering. A missing param takes its
%% spec default (the harness always sends every param; people typing
%% requests by hand need not). Integral floats such as 10.0 are accepted
%% where an integer is expected, as JSON Schema does, and become integers.
-spec validate(binary(), #{binary() => map()}, term()) ->
          {ok, #{binary() => term()}} | {error, binary()}.
validate(Workload, Schemas, Params) when is_map(Params) ->
    try
        Unknown = lists:sort(maps:keys(Params) -- maps:keys(Schemas)),
        case Unknown of
            [] -> ok;
            [Name | _] ->
                fail("unknown parameter ~ts = ~ts: ~ts takes only ~ts",
                     [Name, describe_value(maps:get(Name, Params)), Workload,
                      lists:join(", ", lists:sort(maps:keys(Schemas)))])
        end,
        {ok, maps:from_list([{Name, checked(Name, Schema, Params)}
                             || {Name, Schema} <- lists:sort(maps:to_list(Schemas))])}
    catch
        throw:{bad_params, Message} -> {error, Message}
    end;
validate(_Workload, _Schemas, Params) ->
    {error, iolist_to_binary(["params = ", describe_value(Params), " is not an object"])}.

checked(Name, Schema, Params) ->
    case Params of
        #{Name := Value} -> check(Name, Schema, Value);
        #{} ->
            case Schema of
                #{<<"default">> := Default} -> check(Name, Schema, Default);
                #{} -> fail("missing parameter ~ts: it must be ~ts", [Name, expectation(Schema)])
            end
    end.

%% Returns the value, normalised; throws {bad_params, Message} otherwise.
check(Path, #{<<"enum">> := Allowed} = Schema, Value) ->
    case lists:member(Value, Allowed) of
        true -> Value;
        false -> not_accepted(Path, Schema, Value)
    end;
check(Path, #{<<"type">> := <<"integer">>} = Schema, Value) ->
    Int = case Value of
              _ when is_integer(Value) -> Value;
              _ when is_float(Value), Value == trunc(Value) -> trunc(Value);
              _ -> wrong_type(Path, Schema, Value)
          end,
    in_bounds(Path, Schema, Int);
check(Path, #{<<"type">> := <<"number">>} = Schema, Value) when is_number(Value) ->
    in_bounds(Path, Schema, Value);
check(Path, #{<<"type">> := <<"string">>} = Schema, Value) when is_binary(Value) ->
    Length = string:length(Value),
    case within(Length, maps:get(<<"minLength">>, Schema, undefined),
                maps:get(<<"maxLength">>, Schema, undefined)) of
        true -> Value;
        false -> out_of_range(Path, Schema, Value)
    end;
check(Path, #{<<"type">> := <<"array">>} = Schema, Value) when is_list(Value) ->
    case within(length(Value), maps:get(<<"minItems">>, Schema, undefined),
                maps:get(<<"maxItems">>, Schema, undefined)) of
        true ->
            ItemSchema = maps:get(<<"items">>, Schema, #{}),
            Indexed = lists:zip(lists:seq(0, length(Value) - 1), Value),
            [check(item_path(Path, Index), ItemSchema, Item) || {Index, Item} <- Indexed];
        false ->
            out_of_range(Path, Schema, Value)
    end;
check(Path, #{<<"type">> := <<"object">>} = Schema, Value) when is_map(Value) ->
    Properties = maps:get(<<"properties">>, Schema, #{}),
    Required = maps:get(<<"required">>, Schema, []),
    case lists:sort(Required -- maps:keys(Value)) of
        [] -> ok;
        [Missing | _] -> fail("~ts is missing: ~ts must be ~ts",
                              [field_path(Path, Missing), Path, expectation(Schema)])
    end,
    case maps:get(<<"additionalProperties">>, Schema, true) of
        false ->
            case lists:sort(maps:keys(Value) -- maps:keys(Properties)) of
                [] -> ok;
                [Extra | _] -> fail("unknown field ~ts = ~ts: ~ts must be ~ts",
                                    [field_path(Path, Extra),
                                     describe_value(maps:get(Extra, Value)),
                                     Path, expectation(Schema)])
            end;
        _ ->
            ok
    end,
    maps:map(fun(Field, FieldValue) ->
                     case Properties of
                         #{Field := FieldSchema} -> check(field_path(Path, Field), FieldSchema, FieldValue);
                         #{} -> FieldValue
                     end
             end, Value);
check(Path, #{<<"type">> := _} = Schema, Value) ->
    wrong_type(Path, Schema, Value);
check(_Path, _Schema, Value) ->
    Value.

in_bounds(Path, Schema, Number) ->
    Checks = [{<<"minimum">>, fun(Limit) -> Number >= Limit end},
              {<<"maximum">>, fun(Limit) -> Number =< Limit end},
              {<<"exclusiveMinimum">>, fun(Limit) -> Number > Limit end},
              {<<"exclusiveMaximum">>, fun(Limit) -> Number < Limit end}],
    case lists:all(fun({Key, Holds}) ->
                           case Schema of
                               #{Key := Limit} -> Holds(Limit);
                               #{} -> true
                           end
                   end, Checks) of
        true -> Number;
        false -> out_of_range(Path, Schema, Number)
    end.

within(Count, Min, Max) ->
    (Min =:= undefined orelse Count >= Min) andalso (Max =:= undefined orelse Count =< Max).

-spec out_of_range(binary(), map(), term()) -> no_return().
out_of_range(Path, Schema, Value) ->
    fail("~ts = ~ts is out of range: ~ts must be ~ts",
         [Path, describe_value(Value), Path, expectation(Schema)]).

-spec wrong_type(binary(), map(), term()) -> no_return().
wrong_type(Path, Schema, Value) ->
    fail("~ts = ~ts is not ~ts: ~ts must be ~ts",
         [Path, describe_value(Value), article(maps:get(<<"type">>, Schema)), Path,
          expectation(Schema)]).

-spec not_accepted(binary(), map(), term()) -> no_return().
not_accepted(Path, Schema, Value) ->
    fail("~ts = ~ts is not accepted: ~ts must be ~ts",
         [Path, describe_value(Value), Path, expectation(Schema)]).

%% What a schema accepts, in words: "an integer >= 2 and <= 134217727".
expectation(#{<<"enum">> := Allowed}) ->
    ["one of ", lists:join(", ", [describe_value(V) || V <- Allowed])];
expectation(#{<<"type">> := <<"string">>} = Schema) ->
    ["a string", count_range(Schema, <<"minLength">>, <<"maxLength">>, "characters")];
expectation(#{<<"type">> := <<"array">>} = Schema) ->
    ["an array", count_range(Schema, <<"minItems">>, <<"maxItems">>, "items")];
expectation(#{<<"type">> := <<"object">>} = Schema) ->
    case maps:get(<<"required">>, Schema, []) of
        [] -> "an object";
        Required -> ["an object with ", lists:join(", ", Required)]
    end;
expectation(#{<<"type">> := Type} = Schema) ->
    Bounds = [[" ", Symbol, " ", describe_value(Limit)]
              || {Key, Symbol} <- [{<<"minimum">>, ">="}, {<<"exclusiveMinimum">>, ">"},
                                   {<<"maximum">>, "<="}, {<<"exclusiveMaximum">>, "<"}],
                 Limit <- [maps:get(Key, Schema, undefined)], Limit =/= undefined],
    [article(Type), lists:join(" and", Bounds)];
expectation(_Schema) ->
    "any value".

count_range(Schema, MinKey, MaxKey, Unit) ->
    case {maps:get(MinKey, Schema, undefined), maps:get(MaxKey, Schema, undefined)} of
        {undefined, undefined} -> "";
        {Min, undefined} -> io_lib:format(" of at least ~w ~s", [Min, Unit]);
        {undefined, Max} -> io_lib:format(" of at most ~w ~s", [Max, Unit]);
        {Min, Max} -> io_lib:format(" of ~w to ~w ~s", [Min, Max, Unit])
    end.

article(<<"integer">>) -> "an integer";
article(<<"object">>) -> "an object";
article(<<"array">>) -> "an array";
article(Type) -> ["a ", Type].

item_path(Path, Index) -> iolist_to_binary([Path, $[, integer_to_binary(Index), $]]).

field_path(Path, Field) -> iolist_to_binary([Path, $., Field]).

%% A value as JSON, cut short when long (a payload may be 64 KiB).
-spec describe_value(term()) -> binary().
describe_value(Value) ->
    Json = try iolist_to_binary(msgbench_json:encode(Value))
           catch error:_ -> iolist_to_binary(io_lib:format("~0p", [Value]))
           end,
    case byte_size(Json) > 60 of
        true -> <<(binary:part(Json, 0, 57))/binary, "...">>;
        false -> Json
    end.

-spec fail(io:format(), [term()]) -> no_return().
fail(Format, Args) ->
    throw({bad_params, unicode:characters_to_binary(io_lib:format(Format, Args))}).
