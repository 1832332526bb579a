-- A member's language is now their own choice, and empty while they follow their household's.
-- Until now every member was given the household's language when they joined, so a member
-- whose language is still the household's follows it from here on: when an owner changes the
-- household's language, everyone who never chose their own reads the new one.
UPDATE members SET language = ''
WHERE language = (SELECT households.language FROM households WHERE households.id = members.household_id);
